"""Files: reading and validating pair files, checking typed text, exporting results."""
