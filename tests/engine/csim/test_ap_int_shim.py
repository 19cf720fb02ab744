"""The bundled ap_int.h (engine/csim/include) compiled with g++: ap_uint / ap_int as loop counters and
indices wrap at their width on assignment and ++, compute wide in expressions (no silent overflow of
an address), convert between widths, and sit beside hls_stream.h's FIFOs of packed words."""
import shutil
import subprocess

import pytest

from engine.csim.build import SHIM_INCLUDE

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")

PROGRAM = r"""
#include <ap_int.h>
#include <hls_stream.h>
#include <cstdio>

template <typename T, int N>
struct packed { T lane[N]; };

static int failures = 0;
#define CHECK(cond) do { if (!(cond)) { std::printf("FAILED line %d: %s\n", __LINE__, #cond); failures++; } } while (0)

static long long sum_to(ap_uint<4> n) {
  long long s = 0;
  for (ap_uint<4> i = 0; i < n; i++) s += i;
  return s;
}

int main() {
  /* a counter of trip n in bit_length(n) bits reaches its exit value */
  int trips = 0;
  for (ap_uint<3> i = 0; i < 4; i++) trips++;
  CHECK(trips == 4);
  trips = 0;
  for (ap_uint<1> i = 0; i < 1; i++) trips++;
  CHECK(trips == 1);
  CHECK(sum_to(15) == 105);

  /* assignment, ++ and -- wrap at the width */
  ap_uint<3> u = 7;
  u++;
  CHECK(u == 0);
  u--;
  CHECK(u == 7);
  ap_uint<3> minus_one = -1;
  CHECK(minus_one == 7);
  ap_uint<4> big = 37;
  CHECK(big == 5);
  ap_int<3> s = 3;
  s++;
  CHECK(s == -4);
  ap_int<2> block = -1;
  block++;
  CHECK(block == 0 && block % 2 == 0);
  CHECK(!(block + 1 < 1));

  /* expressions compute wide: products and sums of narrow values do not overflow */
  ap_uint<4> a = 15, b = 15;
  CHECK(a * b == 225);
  CHECK(a + b == 30);
  ap_uint<10> tile = 1000;
  ap_uint<12> row = 4000;
  long long address = (tile * 4096 + row) * 1048576;
  CHECK(address == (1000LL * 4096 + 4000) * 1048576);
  ap_uint<5> d = 3;
  CHECK(d - 20 == -17);  /* as Vitis: the difference of unsigned values is signed */
  const ap_uint<4> position = d * 4;
  CHECK(position == 12);

  /* compound assignment and conversions between widths */
  ap_uint<4> w = 8;
  w /= 2;
  CHECK(w == 4);
  w += 13;
  CHECK(w == 1);
  w <<= 3;
  CHECK(w == 8);
  w %= 5;
  CHECK(w == 3);
  ap_uint<8> wide = 6;
  ap_uint<2> narrow = wide;
  CHECK(narrow == 2);
  ap_uint<8> back = narrow;
  CHECK(back == 2 && back.to_int() == 2 && back.to_uint64() == 2ULL);
  ap_int<8> negative = -100;
  CHECK(negative.to_int() == -100 && negative < d);
  CHECK(ap_uint<63>(-1).to_uint64() == 0x7fffffffffffffffULL);
  CHECK(ap_int<64>(-5) == -5);

  /* an array index, a bool test and a ternary of one type */
  int table[8] = {0, 10, 20, 30, 40, 50, 60, 70};
  ap_uint<3> k = 5;
  CHECK(table[k] == 50 && table[k + 2] == 70);
  CHECK(k && !ap_uint<3>(0));
  ap_uint<3> chosen = k > 4 ? ap_uint<3>(1) : k;
  CHECK(chosen == 1);

  /* FIFOs of packed words and of narrow integers keep working beside it */
  hls::stream<packed<float, 4> > words("words");
  for (ap_uint<2> n = 0; n < 2; n++) {
    packed<float, 4> word;
    for (ap_uint<3> lane = 0; lane < 4; lane++) word.lane[lane] = (float)(n * 4 + lane);
    words.write(word);
  }
  float total = 0;
  for (ap_uint<2> n = 0; n < 2; n++) {
    const packed<float, 4> word = words.read();
    for (ap_uint<3> lane = 0; lane < 4; lane++) total += word.lane[lane];
  }
  CHECK(total == 28.0f);
  hls::stream<ap_uint<5> > indices("indices");
  indices.write(31);
  indices.write(ap_uint<5>(33));
  CHECK(indices.read() == 31 && indices.read() == 1);

  if (failures) return 1;
  std::printf("OK\n");
  return 0;
}
"""


def _compile(tmp_path, source: str, *flags: str) -> subprocess.CompletedProcess:
    (tmp_path / "shim_test.cpp").write_text(source)
    return subprocess.run(["g++", "-std=c++14", "-Wall", "-Wextra", "-Werror", *flags, f"-I{SHIM_INCLUDE}",
                           str(tmp_path / "shim_test.cpp"), "-o", str(tmp_path / "shim_test")],
                          capture_output=True, text=True, check=False)


@pytest.mark.parametrize("optimisation", ["-O0", "-O2"])
def test_ap_uint_and_ap_int_behave_as_counters_and_indices(tmp_path, optimisation):
    built = _compile(tmp_path, PROGRAM, optimisation)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(tmp_path / "shim_test")], capture_output=True, text=True, check=False)
    assert ran.returncode == 0 and ran.stdout.strip() == "OK", ran.stdout + ran.stderr


def test_a_width_the_shim_cannot_hold_is_a_compile_error(tmp_path):
    built = _compile(tmp_path, "#include <ap_int.h>\nint main() { ap_uint<64> x = 1; return (int)x; }\n")
    assert built.returncode != 0 and "at most 63 unsigned" in built.stderr
