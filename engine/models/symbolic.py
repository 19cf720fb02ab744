"""Architecture -> symbolic performance model (sympy): latency with prologue / main / epilogue and a
term per module, DSP / BRAM18K / URAM / LUT / FF, off-chip and on-chip traffic.

Latency (cycles):
- a phase's loops below its tile loops form one pipelined loop that is entered once per tile-loop
  iteration (an invocation); the PE's compute loop once per accumulation event (the tile loops
  below the events, which reduce into the same accumulators, flatten into its pipeline, and an
  accumulator starts from its initial value at its first reduction iteration, as in AutoSA's PE); an invocation of n iterations takes (n - 1) * II + depth cycles, as
  HLS schedules a pipelined loop (the module's depth for compute and I/O modules, TRANSFER_DEPTH for
  a PE's result transfers). The cycle simulator (engine/sim, docs/sim.md) showed that adding the
  depth once per module underestimates designs with many small tiles by up to half;
- a double-buffered input module loads its first block alone, then per block loads the next block
  beside feeding every tile of the current one, as AutoSA's inter/intra transfer pair: first load
  + (blocks - 1) x max(load, block's feed) + block's feed; a
  double-buffered drain takes the larger of its two phases; a PE with double-buffered accumulators
  (pe.py build_pe `overlap_drain`) sends an event's results while it computes the next: first
  event + (events - 1) x max(compute, send) + the last send; otherwise phases add up; a DRAM-facing
  module moves one bus word per `cycles_per_word_expr` cycles (engine/models/dram.py: its AXI bursts,
  the runs of consecutive words one invocation touches in the export's layout, architecture/dram_runs.py,
  capped at the burst length, at `outstanding` bursts in flight of `latency` cycles each, and its DDR
  bank's bandwidth), at least one a cycle;
- main = the largest module term (everything runs as a dataflow pipeline);
- prologue = the first DRAM read's latency + the first block of every input group travelling down
  its chain before PEs start;
- epilogue = from the first PE's last results to the last word written: the PEs fed last finish
  later (`far_pe_lag`; a PE that a value carried from PE to PE delays, later still:
  engine/models/recurrence.py; a late PE with many words behind it in the drain order can end the
  drain after the latest one: `_band_tail`), the drain levels pass the results on (`_drain_tail`,
  which overlaps the two where a level can send while the far PEs finish), then the last DRAM write's
  acknowledgement; a design that runs passes pays it in every pass;
- latency = the longest of the paths through each module: PE: prologue + its term + epilogue; an
  input module: the DRAM latency and the levels above it, its term (at or above a level that splits
  rows, then the last row's load of its part: `_last_row_tail`), then its last block computed
  (the PE term over the group's blocks; a PE that sends an event's results beside the next
  computation computes the block and then sends the last event alone) and the epilogue; a
  double-buffered input module also no earlier than the prologue and then its feeds (it loads two
  blocks ahead of the PEs, then each pair waits for its feed); a drain module: the prologue and its first
  block computed, its term, then the levels above it and the DRAM write. When the PE is the
  bottleneck this is prologue + main + epilogue; when an I/O module is, its own first and last
  blocks are part of its term, which prologue + main + epilogue counted twice (found with the
  cycle simulator, engine/sim).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction

import sympy

from engine.compiler.architecture.build import OPERATORS
from engine.compiler.architecture.multipliers import pe_operator_resources
from engine.compiler.architecture.dram_runs import dram_packing, dram_runs, in_row_order
from engine.compiler.architecture.footprint import subscript_extents
from engine.compiler.architecture.modules import Architecture, Module, Phase
from engine.compiler.architecture.symbols import symbol
from engine.compiler.expressions import smax, smin
from engine.compiler.fifo_depths import (
    SRL_WORDS,
    architecture_fifo_depth,
    architecture_row_block_depth,
    architecture_skew_depth,
)
from engine.models.dram import (
    DramPorts,
    cycles_per_word_expr,
    port_arrays,
    port_directions,
    port_layout,
    ports_on_bank,
    row_ordered_arrays,
)
from engine.models.memory import bram18k, uram
from engine.models.recurrence import late_band

CHAIN_LEVEL_CYCLES = 2  # cycles for a word to cross one FIFO and module on its way
TRANSFER_DEPTH = 2  # pipeline depth of a PE's loops that read or write partial results


@dataclass(frozen=True)
class SymbolicModel:
    architecture: Architecture
    module_terms: dict[str, sympy.Expr]
    prologue: sympy.Expr
    epilogue: sympy.Expr
    main: sympy.Expr
    latency: sympy.Expr
    resources: dict[str, sympy.Expr]  # DSP, BRAM18K, URAM, LUT, FF
    bram_by_array: dict[str, sympy.Expr]
    offchip_elements: dict[str, sympy.Expr]  # per array, both directions
    offchip_bytes: sympy.Expr
    fifo_bytes: sympy.Expr
    macs: int  # points of the (unpadded) problem box: multiply-accumulates of a one-statement kernel
    operations: int  # arithmetic operations of the problem (compute.operations.total): the GOP/s numerator
    # input group's array -> cycles its first block takes to reach the PEs (the prologue's terms);
    # engine/models/crossings.py reads which fill binds
    fills: dict[str, sympy.Expr] = dataclasses.field(default_factory=dict)


def phase_cycles(module: Module, phase: Phase, invocations: sympy.Expr | None = None) -> sympy.Expr:
    """Invocations of the phase's pipelined loop times (its iterations - 1) * II + depth. The
    invocations are its tile loops' iterations unless given (the PE's compute loop is entered once
    per accumulation event: HLS flattens the tiles that reduce into the same accumulators). A DRAM
    module's transfer loop (its first phase, paced at its AXI port's cycles per word by
    `dram_paced`) starts an invocation no sooner than a pace after the last word of the one before
    (the port's next word slot, engine/sim/kernel_arrays.py), so an invocation costs at least a pace
    beyond its last iteration: max(depth, II)."""
    if invocations is None:
        invocations = sympy.Mul(*(loop.trip for loop in phase.loops if loop.role == "tile"))
    per_invocation = phase.iterations / invocations
    depth = TRANSFER_DEPTH if module.kind == "pe" and phase.name != "compute" else module.depth
    if module.dram and phase is module.phases[0]:
        depth = smax(depth, phase.ii)
    return invocations * ((per_invocation - 1) * phase.ii + depth)


def _invocations(phase: Phase) -> sympy.Expr:
    return sympy.Mul(*(loop.trip for loop in phase.loops if loop.role == "tile"))


def module_term(module: Module, compute_events: sympy.Expr | None = None) -> sympy.Expr:
    cycles = [phase_cycles(module, phase, compute_events if phase.name == "compute" else None)
              for phase in module.phases]
    if module.overlapped and len(cycles) > 1 and module.kind == "io":
        # AutoSA's double buffering, as the exporter writes it: the first block is loaded alone,
        # then per block a call pair load(next block) || feed(every tile of this block), joined
        # before the next pair, and the last block's feed alone
        blocks, per_load, per_feed = _paired_blocks(module, cycles)
        return per_load + (blocks - 1) * smax(per_load, per_feed) + per_feed
    if module.overlapped and len(cycles) > 1 and module.kind == "pe":
        # double-buffered accumulators, as the exporter writes the PE: the first event computes
        # alone, then every event computes (with its reload) beside the drain of the one before,
        # and the last event's results are sent alone
        events = compute_events if compute_events is not None else _invocations(module.phases[0])
        sends = [c for p, c in zip(module.phases, cycles) if p.name.startswith("write_")]
        per_compute = sympy.Add(*(c for p, c in zip(module.phases, cycles) if not p.name.startswith("write_"))) / events
        per_send = sympy.Add(*sends) / events
        return per_compute + (events - 1) * smax(per_compute, per_send) + per_send
    if module.overlapped and len(cycles) > 1:
        return smax(*cycles)
    return sympy.Add(*cycles)


def _paired_blocks(module: Module, cycles: list[sympy.Expr]) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr]:
    """A double-buffered input module's (blocks, cycles of one block's load, cycles of one block's
    feed: every tile that reuses the block), from its load and feed phases' `cycles`."""
    blocks = _invocations(module.phases[0])
    return blocks, cycles[0] / blocks, cycles[1] / blocks


def _paired_after_start(module: Module) -> sympy.Expr:
    """Cycles from when the PEs take a double-buffered input module's first block (the prologue) to
    its last feed's end: it loads two blocks ahead (the first alone, the second beside the first
    block's feed) and then waits, since each pair ends with its feed, which the PEs pace. So its
    first feed ends a block's feed after the prologue, the pairs of the blocks after the second
    take the longer of load and feed, and the last feed comes alone. Found with the cycle simulator
    on the searched best of MM 128^3 i-k__i-k.j (72/8/128/8/1): B's chain loads a block per tile at
    the DRAM's pace (4,128 cycles in all, the largest term), but only from when A's first block has
    reached the PEs' last row (1,606 cycles in): the model's 4,633 against 5,943 simulated."""
    cycles = [phase_cycles(module, p) for p in module.phases]
    blocks, per_load, per_feed = _paired_blocks(module, cycles)
    # min(blocks, 2) x feed + max(blocks - 2, 0) x max(load, feed), written without a min (the MINLP
    # certifier takes none): the feeds add up, and loads longer than their feeds add the excess
    return cycles[1] + smax(blocks - 2, 0) * smax(per_load - per_feed, 0)


def _largest(xs: list[sympy.Expr]) -> sympy.Expr:
    return xs[0] if len(xs) == 1 else smax(*xs)


def _per_event(phase: Phase) -> sympy.Expr:
    """Cycles of one event of a transfer phase (its loops after the `events` loop)."""
    return sympy.Mul(*(loop.trip for loop in phase.loops if loop.name != "events")) * phase.ii


def _chain_time(phases: list[Phase]) -> sympy.Expr:
    if not phases:
        return sympy.Integer(0)
    return smax(*(_per_event(p) for p in phases)) + CHAIN_LEVEL_CYCLES * len(phases)


def _streams_once(m: Module) -> bool:
    """A DRAM-facing drain that neither collects a box nor gathers a block: the exporter writes its
    tile, PE and box loops as one perfect nest, which HLS flattens into one pipelined loop
    (engine/export/io_modules.py `_drain`), so it is invoked once a run, not once an event."""
    return m.kind == "drain" and m.dram and not any(p.name in ("collect", "store_block") for p in m.phases)


def _drain_tail(pe: Module, arch: Architecture, group: str, array: str, lag: sympy.Expr,
                late: sympy.Expr | None = None, band: list[tuple[int, tuple, Fraction]] = (),
                unpaced: dict[str, Phase] | None = None) -> sympy.Expr:
    """Cycles from the first PE's last result write (which the PE term counts) to the last word
    reaching the DRAM-facing drain, the PEs fed last finishing `lag` cycles after the first; walking
    the drain levels outwards: a level that streams (the storer, a level that passes words on)
    starts as soon as words arrive and ends one event's transfer after it starts, or (the head of a
    chain of them) when its source ends and its successors' words have passed; a level that buffers
    a box (collect, then send) starts sending once its own box is in, and ends after the chain's
    words or once the last box (the far PE's) is in and sent. Found with the timed C simulation:
    counting every level's whole transfer after the PEs (and the PE depth again) cost a streaming
    storer its event twice; adding the far PEs' lag before the drain counted it twice where the
    head of a buffered chain sends while the far PEs finish (LU [j]). `late`: when a PE that a
    recurrence carried from PE to PE delays (engine/models/recurrence.py) has its last results out;
    the others' words still pass as `lag` says, the late PE's box crosses each level after them (a
    streaming level passes it on word by word, a buffering one once it is in). `band`: every PE
    a recurrence delays (recurrence.py `late_band`: its lateness, its index, the fraction of the
    array's drained words that leave after its box): the head of a level whose one chain holds
    every instance (the storer) passes a word per II, so a late PE with words behind it ends the
    drain no earlier than its box's crossing plus those words (`_band_tail`)."""
    write = next((p for p in pe.phases if p.name == f"write_{group}"), None)
    start = -_per_event(write) if write is not None else sympy.Integer(0)  # first words leave the first PE
    # the head's own results are all out of its PE: the last of a reduction chain of PEs along a space
    # loop (`_results_lag`, found with the cycle simulator on MM 64^3 j-k__i-j.k 64/16/64/8/8, one
    # output tile: the head of C_L2_out sends from when PE(0,7)'s sums are in, 7 x 17 cycles after
    # PE(0,0)'s; the model had it send from PE(0,0)'s, 135 cycles early)
    ready = _results_lag(arch, array)
    end = lag  # the last results are out of the far PEs
    for m in sorted((m for m in arch.modules if m.kind == "drain" and m.array == array), key=lambda m: m.level):
        drain = next(p for p in m.phases if p.name == "drain")
        # a streaming storer runs its events as one pipelined loop (`_streams_once`): the port paces
        # its words from the first one on, and the last event's words, which come after the PEs'
        # last computation, go at the loop's own II (its port-paced whole is the storer's own path)
        words = _per_event((unpaced or {}).get(m.name, drain) if _streams_once(m) else drain)
        chain = next((f for f in arch.fifos if f.source == m.name and f.target == m.name), None)
        members = m.count / (m.count - chain.count) if chain is not None else sympy.Integer(1)
        if any(p.name == "collect" for p in m.phases):
            # a box is in once its PE's last word is unpacked into the buffer, an element a cycle
            unpack = next((f.pack for f in arch.fifos if {f.source, f.target} == {pe.name, m.name}), 1)
            start = ready + unpack + CHAIN_LEVEL_CYCLES
            # the far member's box still crosses the n - 1 members before the head
            end = smax(start + words, end + CHAIN_LEVEL_CYCLES * members + words / members)
            if late is not None:
                late = smax(start + words, late + CHAIN_LEVEL_CYCLES * members + words / members)
            ready = start + words / members
        else:
            # the head of a chain of n instances passes its own share as it arrives from the level
            # below, then the (n - 1) / n its successors hold, a word per cycle
            start = start + CHAIN_LEVEL_CYCLES
            end = smax(end + CHAIN_LEVEL_CYCLES + words * (members - 1) / members, start + words)
            if late is not None:
                late = smax(late + CHAIN_LEVEL_CYCLES * members, start + words)
            ready = smax(ready + CHAIN_LEVEL_CYCLES, start + words / members)
        # a storer that gathers the block first writes it once every element is in
        gather = sympy.Add(*(_per_event(p) for p in m.phases if p.name == "store_block"))
        end = end + gather
        late = late + gather if late is not None else None
    if late is None:
        return end
    return smax(end, late, *_band_tail(arch, array, band))


def _band_tail(arch: Architecture, array: str, band: list[tuple[int, tuple, Fraction]]) -> list[sympy.Expr]:
    """For the PEs of `band` with words behind them: when the last of those words has left the
    drain. A PE's box crosses each level to its chain's head, a hop per member up to its position
    (the level's chain runs along the PE index that level k from the bottom drops,
    engine/compiler/topology.py; every member where the chain is not along that index), after
    its own box where the level collects one; then the words behind it leave the serial head
    one per II (the levels whose single chain holds every instance pass the whole array). Found
    with the simulator's per-module ends on LU j-i__k-j-i at N = 16: PE(15,15) is out last, at
    +420 cycles, but every row's box of the last column follows shortly before it and each row
    still has 16 words to pass the storer's head: the last word leaves 113 cycles after the
    model's one-late-PE estimate."""
    levels = sorted((m for m in arch.modules if m.kind == "drain" and m.array == array), key=lambda m: m.level)
    dims = len(arch.pe_grid)
    common, hops, serial = sympy.Integer(0), [0] * len(band), []
    for k, m in enumerate(levels):
        words = _per_event(next(p for p in m.phases if p.name == "drain"))
        chain = next((f for f in arch.fifos if f.source == m.name and f.target == m.name), None)
        members = m.count / (m.count - chain.count) if chain is not None else sympy.Integer(1)
        along = dims - 1 - k
        if chain is not None and along >= 0 and sympy.simplify(members - sympy.sympify(arch.pe_grid[along])) == 0:
            hops = [h + CHAIN_LEVEL_CYCLES * (q[along] + 1) for h, (_, q, _) in zip(hops, band)]
        else:
            common += CHAIN_LEVEL_CYCLES * members
        if any(p.name == "collect" for p in m.phases):
            common += words / members
        if sympy.simplify(members - m.count) == 0:
            serial.append(words)
        common += sympy.Add(*(_per_event(p) for p in m.phases if p.name == "store_block"))
    if not serial:
        return []
    # keep the PEs no other is both later (with its hops) and followed by more words
    kept, most = [], Fraction(0)
    for late, h, after in sorted(((late + h, h, after) for (late, _, after), h in zip(band, hops)), reverse=True):
        if after > most:
            kept.append((late, after))
            most = after
    return [common + late + sympy.Rational(after.numerator, after.denominator) * smax(*serial) for late, after in kept]


def far_pe_lag(arch: Architecture) -> sympy.Expr:
    """Cycles the PE whose results leave last finishes after the first PE: operands reach the far
    end of a feeder chain or of a PE-to-PE chain a FIFO hop a member later, and along a reduction
    chain each PE adds its predecessor's partial results as they arrive, so it can send its first
    word only once a whole word of them has (the chain's pack + a hop). Found with the timed C
    simulation, paid again in every pass of a design that runs passes: MM i-k__i-k.j int16, 16 PEs
    along k passing 4-element words of C: 5 cycles a PE; j-k__i-k.j int8, 1-element words: 2."""
    def pes(loop: str) -> sympy.Expr:
        return arch.pe_grid[list(arch.space_loops).index(loop)]

    lags = []
    for g in arch.groups:
        chained = [f for f in arch.fifos if f.array == g.array and f.pattern == "pe_chain" and f.along in arch.space_loops]
        # results: a whole word of partial sums before a PE sends; operands: a FIFO hop a PE
        lags += [(pes(f.along) - 1) * (f.pack + 1) for f in chained if f.reversed]
        passed = sympy.Add(*((pes(f.along) - 1) * CHAIN_LEVEL_CYCLES for f in chained if not f.reversed))
        lags.append(passed)
        feeders = [f for f in arch.fifos if f.array == g.array and not f.reversed
                   and f.pattern in ("to_pe", "to_boundary_pe")]
        if not feeders:
            continue
        source = next(m for m in arch.modules if m.name == feeders[0].source)
        chain = next((f for f in arch.fifos if f.source == source.name and f.target == source.name
                      and not f.reversed), None)
        if chain is not None:
            members = source.count / (source.count - chain.count)
            lags.append((members - 1) * CHAIN_LEVEL_CYCLES + passed)
    return smax(0, *lags)


def _results_lag(arch: Architecture, array: str) -> sympy.Expr:
    """Cycles after the first PE sends its results until the last PE of a reduction chain along a
    space loop (partial results passed PE to PE, `far_pe_lag`'s rule) sends the chain's sums."""
    chained = [f for f in arch.fifos if f.array == array and f.pattern == "pe_chain" and f.reversed
               and f.along in arch.space_loops]
    return smax(0, *((arch.pe_grid[list(arch.space_loops).index(f.along)] - 1) * (f.pack + 1) for f in chained))


def _loads_any(arch: Architecture, group) -> sympy.Expr:
    """1 when the group's DRAM-facing input module loads at least one block, else 0: partial results
    read back (an input group always loads; no min then, which the MINLP route could not take)."""
    if group.kind != "acc":
        return sympy.Integer(1)
    events = [l.trip for m in arch.modules if m.kind == "io" and m.array == group.array and m.dram
              for p in m.phases if p.name == "load" for l in p.loops if l.name == "events"]
    return smin(1, events[0]) if events else sympy.Integer(1)


def _last_row_fill(arch: Architecture, group, layout: tuple[int, ...] | None = None) -> sympy.Expr:
    """Cycles until the last row of a group's feeders (fed by the level above through
    `to_row_heads`) has its first block: every member of the level above reads the whole block,
    row-major in the array's stored order (`layout`, its SIMD layout: MM j-k__i-k.j__simd-k stores
    B as [j][k], so the rows along j get their parts a quarter block apart at 4 rows, where [k][j]
    spread them over the whole block; the timed C simulation's PEs waited 192 cycles for the last
    row's B at 64^3, and A, passed from row to row through 2-word FIFOs, held the first rows back
    with it), and passes its own part down as it arrives, so the last member's part starts that
    far into the block ((n - 1) / n of it where the chain's loop is the outer subscript, C[i][j]
    along i; less where it is an inner one), and the row's level takes its block from then on.
    Found with the timed C simulation on MM i-j__i-k.j: in every pass that reads partial results
    back the far PEs' first C box came 48 cycles after the near ones' and, operands passing from PE
    to PE, the whole array waited for them (12 passes: the model's whole 604-cycle gap). 0 where
    no level passes rows their parts."""
    found = _row_split(arch, group)
    if found is None:
        return sympy.Integer(0)
    upper = found[0]
    levels = [m for m in arch.modules if m.kind == "io" and m.array == group.array]
    rows = _chain_time([p for m in levels if m.level < upper.level for p in m.phases if p.name == "load"])
    return _last_row_lag(arch, group, layout) + rows + CHAIN_LEVEL_CYCLES * sum(
        1 for m in levels if m.level >= upper.level)


def _row_split(arch: Architecture, group) -> tuple[Module, sympy.Expr, Phase] | None:
    """The level that passes each row of a group's feeders its part (through `to_row_heads`), its
    chain's members and its load phase; None where no level does."""
    link = next((f for f in arch.fifos if f.array == group.array and f.pattern == "to_row_heads"
                 and not f.reversed), None)
    if link is None:
        return None
    upper = arch.module(link.source)
    chain = next((f for f in arch.fifos if f.source == upper.name and f.target == upper.name), None)
    load = next((p for p in upper.phases if p.name == "load"), None)
    if chain is None or load is None:
        return None
    return upper, upper.count / (upper.count - chain.count), load


def _fed_by_rows(arch: Architecture, group, module: Module) -> bool:
    """`module` is one of a group's feeders below the level that splits its rows (`_row_split`)."""
    found = _row_split(arch, group)
    return found is not None and module.level is not None and module.level < found[0].level


def _last_row_lag(arch: Architecture, group, layout: tuple[int, ...] | None = None) -> sympy.Expr:
    """Cycles into a block of the level that splits a group's rows (`_row_split`) at which the last
    row's part starts (`_last_row_fill`); the last row's feeders run that far behind the first
    row's from block to block. 0 where no level splits rows."""
    found = _row_split(arch, group)
    if found is None:
        return sympy.Integer(0)
    _, members, load = found
    along = arch.space_loops[0]
    extents = subscript_extents(group.access, {l: symbol(f"{l}_t1") for a in group.access.index for l, _ in a.terms})
    offset = sympy.Integer(0)
    order = list(layout) if layout else list(range(len(group.access.index)))
    extents = [extents[d] for d in order]
    for d, index in enumerate(group.access.index[k] for k in order):
        coeff = dict(index.terms).get(along, 0)
        offset += abs(coeff) * symbol(f"{along}_t1") * (members - 1) / members * sympy.Mul(*extents[d + 1:])
    return offset / sympy.Mul(*extents) * _per_event(load)


def _last_row_tail(arch: Architecture, group, module: Module, layout: tuple[int, ...] | None = None) -> sympy.Expr:
    """Cycles the last row's feeders still load after `module`, at or above the level that splits a
    group's rows (`_row_split`), has passed on the last block: that row's part starts
    `_last_row_lag` into the level's block (in the array's stored order, `layout`) and the row's
    head level takes its own per-block load from when the part starts arriving, so the row ends
    that load less the rest of the level's block after the level does (the levels below pass it on
    a hop a member, which `far_pe_lag` counts; a part spread over the whole block adds nothing).
    Found with the cycle simulator on MM 64^3 i-k__j-k.i 18/1/32/1/64 (i_t1/i_t2/j_t1/j_t2/k_t1):
    A's loader is the bottleneck, and after its last word row 17's A_L1_in head unpacks its 4 words
    of the 72 into 64 elements, 64 cycles before the row's last feeders start their last feed (model
    992 against 1,057, as the timed C simulation). 0 where no level splits rows or `module` is below
    the split."""
    found = _row_split(arch, group)
    if found is None or module.level is None or module.level < found[0].level:
        return sympy.Integer(0)
    load = found[2]
    link = next(f for f in arch.fifos if f.array == group.array and f.pattern == "to_row_heads" and not f.reversed)
    head = next((p for p in arch.module(link.target).phases if p.name == "load"), None)
    if head is None:
        return sympy.Integer(0)
    return smax(0, _per_event(head) - _per_event(load) + _last_row_lag(arch, group, layout))


def dram_paced(arch: Architecture, dram: DramPorts, port_groups: tuple = ()) -> Architecture:
    """The architecture with each DRAM-facing module's transfer loop at the II its AXI port sustains:
    smax(its II, the port's cycles per word for the runs it touches in `dram.layout`). `port_groups`:
    the design's I/O groups, which decide its ports (a pass's architecture has a pass's groups, but
    kernel0 has the design's ports: an array read back in later passes is inout in the first too)."""
    groups = port_groups or arch.groups
    arrays = port_arrays((g.array, g.kind) for g in groups)
    directions = port_directions((g.array, g.kind, sympy.sympify(g.reloads) != 0, g.initialised_on_chip)
                                 for g in groups)
    ordered = row_ordered_arrays((m.array, in_row_order(arch, m)) for m in arch.modules if m.dram)
    modules = []
    for m in arch.modules:
        if not m.dram or m.array not in arrays:
            modules.append(m)
            continue
        bits = next(g.element_bits for g in arch.groups if g.array == m.array)
        packing = dram_packing(arch, m)
        word_bytes = (sympy.Symbol(packing.name) if packing else 1) * sympy.Rational(bits, 8)
        widest = (packing.upper if packing else 1) * bits // 8
        layout, _ = port_layout(dram.layout, directions[m.array], m.array in ordered)
        pace = cycles_per_word_expr(dram_runs(arch, m)[layout], word_bytes, dram,
                                    ports_on_bank(dram, arrays, m.array), widest_word_bytes=max(1, widest),
                                    maximum=smax)
        first = m.phases[0]
        paced = dataclasses.replace(first, ii=smax(first.ii, pace) if first.ii != 1 else pace)
        modules.append(dataclasses.replace(m, phases=(paced, *m.phases[1:])))
    return dataclasses.replace(arch, modules=tuple(modules))


def stored_layouts(design) -> dict[str, tuple[int, ...]]:
    """Array -> the order its dimensions are stored in, for the arrays a SIMD layout reorders (the
    descriptor's design.simd_layout)."""
    return dict(design.simd.layout) if design.simd else {}


def build_symbolic_model(arch: Architecture, problem_size: dict[str, int], dram: DramPorts,
                         port_groups: tuple = (), layouts: dict | None = None) -> SymbolicModel:
    """`dram`: the memory system the DRAM-facing modules see (device.dram_ports(layout));
    `port_groups`: the design's I/O groups when `arch` is one of its passes (dram_paced);
    `layouts`: array -> the order its dimensions are stored in, where it is not declaration order
    (`stored_layouts(design)`, the SIMD layout the exporter stores and walks blocks in)."""
    layouts = layouts or {}
    unpaced = {m.name: m.phases[0] for m in arch.modules if m.dram}
    arch = dram_paced(arch, dram, port_groups)
    read_latency = write_latency = dram.axi.latency
    # the PE's compute pipeline is refilled once per event of the results it accumulates
    events = next((g.loads for g in arch.groups if g.needs_drain), None)
    terms = {m.name: module_term(m, events if m.kind == "pe" else None) for m in arch.modules}
    main = smax(*terms.values())
    pe = arch.module("PE")
    # levels of a chain are pipelined through FIFOs: one block takes as long as its slowest level,
    # plus a few cycles per level to get through
    # or, where a level passes each row of feeders its part, until the last row has its first block
    # (`_last_row_fill`): the PEs pass operands on to each other, so the array starts with its last row
    # (a group whose chain loads no block at these values, partial results that a single pass never
    # reads back, fills nothing: found with the timed C simulation on MM i__j-k.i at one k tile)
    fills: dict[str, sympy.Expr] = {}
    for g in arch.groups:
        if g.needs_input_modules and not (g.kind == "acc" and g.exterior):
            loads = [p for m in arch.modules if m.kind == "io" and m.array == g.array for p in m.phases
                     if p.name == "load"]
            fill = _loads_any(arch, g) * smax(_chain_time(loads), _last_row_fill(arch, g, layouts.get(g.array)))
            fills[g.array] = smax(fills[g.array], fill) if g.array in fills else fill
    # (partial results read back into a reduction carried from PE to PE enter its first PE as it
    # drains: the PEs do not wait for them to start)
    lag = far_pe_lag(arch)
    # a value carried from PE to PE through the scop's local arrays may finish one PE later still
    band = late_band(arch, problem_size, CHAIN_LEVEL_CYCLES)
    late = max([0] + [late for late, _, _ in band])
    late = smax(lag, late) if late != 0 else None
    drains = [_drain_tail(pe, arch, g.name, g.array, lag, late, [(l, q, f[g.array]) for l, q, f in band], unpaced)
              for g in arch.groups if g.needs_drain]
    prologue = smax(0, *fills.values()) + read_latency
    # after the first PE's last results: the far PEs', the drain levels, the DRAM write's acknowledgement
    epilogue = smax(0, *drains) + write_latency
    dtype = arch.compute["dtype"]
    lanes = pe.count * arch.simd
    # each operator per lane, the paired 8-bit multiplies as the PE writes them (architecture/multipliers.py)
    operators = pe_operator_resources(arch.compute, arch.simd, OPERATORS)
    dsp = pe.count * operators["DSP"]
    bram, ur, by_array = sympy.Integer(0), sympy.Integer(0), {}
    for m in arch.modules:
        for b in m.buffers:
            copies = 2 if b.double_buffered else 1
            use = m.count * copies * (uram(b.width_bits, b.depth) if b.storage == "uram" else bram18k(b.width_bits, b.depth))
            if b.storage == "uram":
                ur += use
            else:
                bram += use
                by_array[b.array] = by_array.get(b.array, sympy.Integer(0)) + use
    by_name = {m.name: m for m in arch.modules}
    for f in arch.fifos:  # FIFOs deeper than the default (engine/compiler/fifo_depths.py) may need block RAM
        if architecture_row_block_depth(f, by_name) is not None:
            use = f.count * bram18k(f.width_bits, architecture_fifo_depth(f, by_name))
            bram += use
            by_array[f.array] = by_array.get(f.array, sympy.Integer(0)) + use
    overhead = OPERATORS["module_overhead"]
    io_count = sympy.Add(*(m.count for m in arch.modules if m.kind != "pe"))
    fifo_bits = sympy.Add(*(f.count * f.width_bits for f in arch.fifos))
    # FIFOs the skew rule deepens are shift registers: a LUT per bit and SRL_WORDS words
    srl_luts = sympy.Add(*(f.count * f.width_bits * sympy.ceiling(skew / SRL_WORDS) for f in arch.fifos
                           if (skew := architecture_skew_depth(f, arch)) is not None))
    lut = (pe.count * (overhead["pe"]["lut"] + operators["LUT"]) + lanes * OPERATORS[dtype]["lut_per_lane"]
           + io_count * overhead["io"]["lut"] + fifo_bits * overhead["fifo_lut_per_bit"] + srl_luts)
    ff = (pe.count * overhead["pe"]["ff"] + lanes * OPERATORS[dtype]["ff_per_lane"]
          + io_count * overhead["io"]["ff"] + fifo_bits * overhead["fifo_ff_per_bit"])
    offchip: dict[str, sympy.Expr] = {}
    offchip_bytes, fifo_bytes = sympy.Integer(0), sympy.Integer(0)
    bits = {g.array: g.element_bits for g in arch.groups}
    for m in arch.modules:
        for phase in m.phases:
            if phase.elements is None:
                continue
            if m.dram:
                offchip[m.array] = offchip.get(m.array, sympy.Integer(0)) + phase.elements
                offchip_bytes += phase.elements * bits[m.array] / 8
            else:
                fifo_bytes += m.count * phase.elements * bits[m.array] / 8
    macs = 1
    for n in problem_size.values():
        macs *= n
    # the paths that end with the epilogue: from the prologue (the PEs, the paired inputs' feeds) or
    # from the DRAM's first read (the inputs); the drains' end with the last write
    after_start, inputs, paths = [terms[pe.name]], [], []
    pe_cycles = {p.name: phase_cycles(pe, p, events if p.name == "compute" else None) for p in pe.phases}
    sends = computes = None
    if pe.overlapped and events is not None and any(n.startswith("write_") for n in pe_cycles):
        sends = sympy.Add(*(c for n, c in pe_cycles.items() if n.startswith("write_")))
        computes = sympy.Add(*(c for n, c in pe_cycles.items() if not n.startswith("write_")))
    for m in arch.modules:
        if m.kind == "pe":
            continue
        # what the PEs still do after this module's last block: one block of the group's computation
        # (for partial results reloaded into an accumulator, one output block of that group)
        group = next(g for g in arch.groups if g.array == m.array)
        loads = group.loads
        per_block = terms[pe.name] / loads
        if m.kind == "io" and sends is not None:
            # a PE that sends an event's results beside the next event's computation still computes
            # this group's last block and then sends the last event alone (found with the cycle
            # simulator on MM 64^3 j-k__i-j.k 64/8/64/8/23, one event: the PE term / 3 blocks
            # counted a third of the only send)
            per_block = computes / loads + sends / events
        above = CHAIN_LEVEL_CYCLES * (max(x.level for x in arch.modules if x.array == m.array and x.level) - m.level)
        transfer = phase_cycles(m, m.phases[0])  # load / drain: what the module does on its own
        paced = [phase_cycles(m, p) for p in m.phases[1:]]  # feed / collect: paced by the PEs
        if m.kind == "io" and m.overlapped and paced:
            # double buffered: its term runs from its first load to its last feed, which the PEs consume
            # as it goes; it runs at most two blocks ahead of the PEs, which start after the prologue
            # (a row of feeders fed through `to_row_heads` runs behind the first row by where its
            # part lies in the level above's block, `_last_row_lag`; after its last feed the PEs
            # still send the last event alone: MM 64^3 j-k__i-k.j__simd-k 13/1/64/16/64/4, B stored
            # [j][k], the last row's B feeders ended 188 cycles after the first's and the PEs' last
            # send followed them, timed C simulation 2,282 against the model's 2,139)
            behind = _last_row_lag(arch, group, layouts.get(m.array)) if _fed_by_rows(arch, group, m) else 0
            inputs.append(read_latency + above + behind + terms[m.name]
                          + (sends / events if sends is not None else 0))
            after_start.append(_paired_after_start(m))
        elif m.kind == "io":
            # after its loads, the PEs' last block; without double buffering, its PE-paced feeds; at or
            # above the level that splits rows, after the last row's feeders have their last block
            # (`_last_row_tail`)
            work = transfer + (per_block if not paced else sympy.Add(*paced))
            inputs.append(read_latency + above + _last_row_tail(arch, group, m, layouts.get(m.array)) + work)
        else:
            first = per_block
            if sends is not None:
                # the drain's first event waits for the PEs' first: computed, sent, and summed along
                # a reduction chain of PEs to the one whose results leave it (found with the cycle
                # simulator on MM 60x50x70 j-k__i-k.j 6/12/12/4/1: its passes 45 cycles short)
                first = computes / events + sends / events + _results_lag(arch, m.array)
            work = transfer + (first if m.overlapped or not paced else sympy.Add(*paced))
            paths.append(prologue + work + above + write_latency)
    latency = _largest([_largest([prologue + _largest(after_start), *inputs]) + epilogue, *paths])
    return SymbolicModel(arch, terms, prologue, epilogue, main, latency,
                         {"DSP": dsp, "BRAM18K": bram, "URAM": ur, "LUT": lut, "FF": ff}, by_array,
                         offchip, offchip_bytes, fifo_bytes, macs, arch.compute["operations"]["total"], fills)

