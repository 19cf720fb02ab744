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
