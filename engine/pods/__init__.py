"""Multi-pod accelerators (SOSA, Yüzügüler et al.): many weight-stationary r x c arrays joined to
memory banks by an interconnect, networks cut into tile operations, an offline scheduler and a cycle
replay with energy. See docs/pods.md; the modules, in pipeline order: technology, workload, tiling,
interconnect, system, scheduler (+ schedule_kernel), simulate, studies, plots."""
