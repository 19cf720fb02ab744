"""A design's compute statement and SIMD loop -> how the PE's 8-bit multiplies map to DSP48E2 slices
(descriptor `compute.multipliers`), and the DSP and LUT a PE of L lanes asks for.

One source of truth: the emitter (engine/export/pe_accumulate.py) writes the PE's multiplies as this
says, and the models (engine/models/symbolic.py) and the floorplan's netlist count them from
`pe_operator_resources`. By default Vitis HLS maps every 8x8 multiply to a DSP48E2 of its own
(resources/operators.json: int8 mul = 1 DSP). Two lanes of an 8-bit product `acc += x * y` pair up:

- `shared`: one operand is the same on every lane (the SIMD loop does not index it, e.g. MM with
  SIMD along j: C[i][j+l] += A[i][k] * B[k][j+l]). Two products s*x0 and s*x1 come from one 27x18
  multiply of s by the pre-adder's (x1 << 18) + x0 (Xilinx WP486, "Deep Learning with INT8
  Optimization on Xilinx Devices"): s*x0 is the low 18 bits read as a signed (unsigned) number,
  s*x1 the rest shifted down by 18, exact for every 8-bit value. One DSP, no fabric multiplier.
- `split`: both operands differ per lane (a SIMD dot product, e.g. MM with SIMD along k, AutoSA's
  int8 `simd[64]`): no DSP48E2 packing is exact (it needs a shared operand), so the pair's first
  multiply is bound to a DSP and its second to fabric LUTs, which is what AutoSA's int8 design does
  (docs/examples/mm_int8_large.rst: `#pragma HLS RESOURCE ... core=Mul_LUT` on half the multiplies,
  6,144 DSPs for 192 PEs x 64 lanes).

With an odd number of lanes the last lane's multiply is a DSP of its own. Anything else (float,
16-bit or wider, several multiplies or statements, mixed signedness) is not paired: one DSP-bound
operator per lane as operators.json charges it.
"""
from __future__ import annotations

import sympy

from engine.compiler.ir import BinOp, Call, Ref, UnaryOp

PAIRED_TYPES = ("int8", "uint8")


def multiplier_pairing(statements, simd_loop: str | None, dtypes: dict[str, str], several: bool) -> dict | None:
    """`statements`: the band's compute statements (IR); `dtypes`: array -> element type.
    {"form": "shared" | "split", "operands": [x, y], "shared": the array every lane reads the same
    element of (shared form)} or None."""
    if several or simd_loop is None:
        return None
    with_mul = [s for s in statements if _muls(s.expr)]
    if len(with_mul) != 1:
        return None
    stmt = with_mul[0]
    e = stmt.expr
    if not (isinstance(e, BinOp) and e.op == "+"):
        return None
    sides = [e.lhs, e.rhs]
    target = [s for s in sides if isinstance(s, Ref) and s.access == stmt.target]
    product = [s for s in sides if isinstance(s, BinOp) and s.op == "*"]
    if len(target) != 1 or len(product) != 1:
        return None
    x, y = product[0].lhs, product[0].rhs
    if not (isinstance(x, Ref) and isinstance(y, Ref)):
        return None
    kinds = {dtypes[x.access.array], dtypes[y.access.array]}
    if len(kinds) != 1 or kinds.pop() not in PAIRED_TYPES:
        return None
    varies = [any(i.coeff(simd_loop) for i in r.access.index) for r in (x, y)]
    if not any(varies):
        return None
    pairing = {"form": "split" if all(varies) else "shared", "operands": [x.access.array, y.access.array]}
    if not all(varies):
        pairing["shared"] = (x, y)[varies.index(False)].access.array
    return pairing


def lane_multiplies(pairing: dict | None, lanes):
    """(DSP-bound, fabric) multiplies of the paired product in a PE of `lanes` lanes (an int or a
    sympy expression): pairs plus an odd last lane on DSPs, and in the split form one fabric
    multiply per pair."""
    if pairing is None:
        return lanes, 0
    # ceil(L/2) as a sympy ceiling, which the mathematical-programming translation reads
    dsp = sympy.ceiling(lanes / 2) if isinstance(lanes, sympy.Basic) else -(-lanes // 2)
    return dsp, (lanes - dsp if pairing["form"] == "split" else 0)


def pe_operator_resources(compute: dict, lanes, table: dict) -> dict:
    """DSP and operator LUT of one PE (`table`: resources/operators.json): every operator on every
    lane at its operators.json cost, except the paired product's multiply, which costs its DSP-bound
    multiplies (lane_multiplies) and `mul_fabric_lut` per fabric multiply."""
    costs = table[compute["dtype"]]
    ops = compute["ops"]
    pairing = compute.get("multipliers")
    dsp = lanes * sum(costs[op]["dsp"] * n for op, n in ops.items())
    lut = lanes * sum(costs[op].get("lut", 0) * n for op, n in ops.items())
    if pairing is not None:
        on_dsp, on_fabric = lane_multiplies(pairing, lanes)
        dsp += costs["mul"]["dsp"] * (on_dsp - lanes)
        lut += costs["mul_fabric_lut"] * on_fabric
    return {"DSP": dsp, "LUT": lut}


def _muls(expr) -> int:
    if isinstance(expr, BinOp):
        return (expr.op == "*") + _muls(expr.lhs) + _muls(expr.rhs)
    if isinstance(expr, UnaryOp):
        return _muls(expr.operand)
    if isinstance(expr, Call):
        return sum(_muls(a) for a in expr.args)
    return 0
