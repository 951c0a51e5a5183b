"""18xx.games interchange for 1894: import recorded games, export ours (see the modules)."""
