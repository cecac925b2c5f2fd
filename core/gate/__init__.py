"""The CI gate behind ``cosine-probe check``: a TOML config, budgets evaluated on tidy results, JUnit XML and a Markdown summary."""
