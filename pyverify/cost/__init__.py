"""Cost: what a hit is worth (transfer against recompute) and the reuse report."""
