"""Search strategies over a design's tuning parameters (the hybrid tuner and its baselines)."""
