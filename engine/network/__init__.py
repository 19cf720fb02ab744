"""Whole networks: a workload (layers with loop sizes) tuned for every (layer, design) pair on Dask."""
