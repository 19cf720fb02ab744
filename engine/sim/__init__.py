"""Cycle-level executor of the hardware a design descriptor describes (issue 7).

`simulate(descriptor, values)` runs every module instance as a concurrent process over bounded
FIFOs (depths from engine/compiler/fifo_depths.py) and returns a SimulationResult; it never reads
the analytical latency formulas. Rules and their sources: docs/sim.md.
"""
from engine.sim.dram import DramModel
from engine.sim.simulate import (
                                 DEFAULT_MAX_CYCLES,
                                 SimulationBudgetExceeded,
                                 SimulationDeadlock,
                                 SimulationResult,
                                 check_values,
                                 format_result,
                                 simulate,
)

__all__ = ["DEFAULT_MAX_CYCLES", "DramModel", "SimulationBudgetExceeded", "SimulationDeadlock",
           "SimulationResult", "check_values", "format_result", "simulate"]
