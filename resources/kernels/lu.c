/*
 * lu.c - LU decomposition without pivoting (Doolittle), in the single-assignment form of AutoSA's
 * LU case study (AutoSA paper sec. 8.2, Table 8; PolyBench's algorithm): A = L x U, L unit lower
 * triangular, U upper triangular. The matrix is read as A[col][row]; U[row][col] and L[col][row]
 * are written in the same transposed convention as the source form.
 *
 * Iteration (k, j, i) over the pyramid k <= j, i < N: row j, column i at elimination step k.
 *     prev_V: the matrix entry at step k (A at k = 0, else the update of step k - 1);
 *     U_tmp : U[k][i], travelling down the rows j;   L_tmp: L[j][k], travelling along the columns i;
 *     V     : prev_V - L_tmp * U_tmp, the entry for step k + 1.
 * Every dependence is uniform (distance 1 along one loop), so each loop can be a space loop.
 * Default N = 16 (AutoSA reports N = 12, 16, 20, 24); override with -D N=24.
 * Build and self-check: gcc -O2 -std=c99 lu.c -o lu && ./lu   (prints PASS)
 */
#include <stdio.h>

#ifndef N
#define N 16
#endif

#ifndef DATA_T
#define DATA_T float
#endif
typedef DATA_T data_t;

data_t A[N][N];
data_t L[N][N];
data_t U[N][N];

#pragma GCC diagnostic ignored "-Wunknown-pragmas"

void kernel(void)
{
#pragma scop
  data_t prev_V[N][N][N];
  data_t V[N][N][N];
  data_t U_tmp[N][N][N];
  data_t L_tmp[N][N][N];
  for (int k = 0; k < N; k++)
    for (int j = k; j < N; j++)
      for (int i = k; i < N; i++) {
        if (k == 0)
          prev_V[i][j][k] = A[i][j];
        else
          prev_V[i][j][k] = V[i][j][k - 1];
        if (j == k) {
          U_tmp[i][j][k] = prev_V[i][j][k];
          U[j][i] = U_tmp[i][j][k];
        } else {
          U_tmp[i][j][k] = U_tmp[i][j - 1][k];
          if (i == k) {
            L_tmp[i][j][k] = prev_V[i][j][k] / U_tmp[i][j][k];
            L[i][j] = L_tmp[i][j][k];
          } else {
            L_tmp[i][j][k] = L_tmp[i - 1][j][k];
            V[i][j][k] = prev_V[i][j][k] - L_tmp[i][j][k] * U_tmp[i][j][k];
          }
        }
      }
#pragma endscop
}

int main(void)
{
  /* A diagonally dominant matrix, so that no pivoting is needed. */
  for (int c = 0; c < N; c++)
    for (int r = 0; r < N; r++)
      A[c][r] = (data_t)(r == c ? 4 * N : ((r * 5 + c * 3) % 7) - 3);
  kernel();
  /* L[c][r] is L(r, c) for r > c (L(r, r) = 1); U[r][c] is U(r, c) for c >= r. */
  for (int r = 0; r < N; r++)
    for (int c = 0; c < N; c++) {
      double sum = 0;
      for (int m = 0; m <= (r < c ? r : c); m++) {
        double l = m == r ? 1.0 : (double)L[m][r];
        sum += l * (double)U[m][c];
      }
      double want = (double)A[c][r];
      double diff = sum - want < 0 ? want - sum : sum - want;
      if (diff > 1e-3 * (want < 0 ? -want : want) + 1e-3) {
        printf("FAIL at (%d, %d): L x U = %g, A = %g\n", r, c, sum, want);
        return 1;
      }
    }
  printf("PASS\n");
  return 0;
}
