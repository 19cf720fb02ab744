"""Pieces of C that bad-input tests assemble into kernels (HEADER + loops + statement + FOOTER)."""

HEADER = """\
#define N 8
float A[N][N], B[N][N], C[N][N];
void kernel(void) {
#pragma scop
"""
FOOTER = """\
#pragma endscop
}
"""
MM_LOOPS = """\
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++)
"""
VALID_MM = HEADER + MM_LOOPS + "        C[i][j] += A[i][k] * B[k][j];\n" + FOOTER

# Forward substitution L x = b in single-assignment form (local arrays, if/else guards, a division
# on the diagonal): x[j] travels down the rows i in xv, the running b[i] - sum L[i][m] x[m] along
# the columns j in s_in / s_out. Its main() checks L x = b and prints PASS.
TRISOLVE = r"""
#include "stdio.h"
#ifndef N
#define N 6
#endif
typedef float data_t;
data_t L[N][N];
data_t b[N];
data_t x[N];

void kernel(void)
{
#pragma scop
  data_t s_in[N][N];
  data_t s_out[N][N];
  data_t xv[N][N];
  for (int i = 0; i < N; i++)
    for (int j = 0; j <= i; j++) {
      if (j == 0)
        s_in[i][j] = b[i];
      else
        s_in[i][j] = s_out[i][j - 1];
      if (i == j) {
        xv[i][j] = s_in[i][j] / L[i][j];
        x[i] = xv[i][j];
      } else {
        xv[i][j] = xv[i - 1][j];
        s_out[i][j] = s_in[i][j] - L[i][j] * xv[i][j];
      }
    }
#pragma endscop
}

int main(void)
{
  for (int i = 0; i < N; i++) {
    b[i] = (data_t)(i + 1);
    for (int j = 0; j < N; j++)
      L[i][j] = j > i ? 0 : (data_t)(i == j ? 2 + i : ((i * 3 + j) % 5) - 2);
  }
  kernel();
  for (int i = 0; i < N; i++) {
    double sum = 0;
    for (int j = 0; j <= i; j++)
      sum += (double)L[i][j] * x[j];
    if (sum - b[i] > 1e-4 || b[i] - sum > 1e-4) {
      printf("FAIL %d\n", i);
      return 1;
    }
  }
  printf("PASS\n");
  return 0;
}
"""
