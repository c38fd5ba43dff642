"""How chartscore's forked children live and die (value-free; the lowest layer)."""
