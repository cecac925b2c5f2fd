"""Where work runs beyond this process: Ray sessions, a cluster's capacity (``session``)."""
