/*
 * ttmc.c - chained tensor times matrix (TTMc, as in the Tucker decomposition):
 *     D[i][j][k] = sum_{l,m} A[i][l][m] * B[l][j] * C[m][k]
 * A: I x L x M tensor, B: L x J, C: M x K, D: I x J x K.
 * Defaults: I = J = K = L = M = 128, float. Sizes and element type can be
 * overridden with -D, e.g. `-D I=16 -D J=16 -D K=16 -D L=16 -D M=16 -D DATA_T=int16_t`.
 */
#include <stdio.h>
#include <stdint.h>

#ifndef I
#define I 128
#endif
#ifndef J
#define J 128
#endif
#ifndef K
#define K 128
#endif
#ifndef L
#define L 128
#endif
#ifndef M
#define M 128
#endif

#ifndef DATA_T
#define DATA_T float
#endif
typedef DATA_T data_t;

data_t A[I][L][M];
data_t B[L][J];
data_t C[M][K];
data_t D[I][J][K];
data_t D_ref[I][J][K];

/* The scop / endscop pragmas below delimit the static control part read by
 * the polyhedral front end; C compilers do not know them, so keep -Wall quiet. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas"

void kernel(void)
{
#pragma scop
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++)
      for (int k = 0; k < K; k++) {
        D[i][j][k] = 0;
        for (int l = 0; l < L; l++)
          for (int m = 0; m < M; m++)
            D[i][j][k] += A[i][l][m] * B[l][j] * C[m][k];
      }
#pragma endscop
}

/* Integer element types are compared exactly (kernel and reference wrap the
 * same way on overflow); floating-point types with a relative tolerance. */
static int mismatch(double expected, double got)
{
  double diff = expected - got;
  double mag = expected < 0 ? -expected : expected;
  if ((data_t)0.5 == (data_t)0)
    return expected != got;
  if (diff < 0)
    diff = -diff;
  return diff > 1e-3 * mag + 1e-6;
}

int main(void)
{
  for (int i = 0; i < I; i++)
    for (int l = 0; l < L; l++)
      for (int m = 0; m < M; m++)
        A[i][l][m] = (data_t)(((i * 7 + l * 3 + m * 11) % 5) - 2);
  for (int l = 0; l < L; l++)
    for (int j = 0; j < J; j++)
      B[l][j] = (data_t)(((l * 3 + j * 2 + 1) % 5) - 2);
  for (int m = 0; m < M; m++)
    for (int k = 0; k < K; k++)
      C[m][k] = (data_t)(((m * 2 + k * 7 + 3) % 5) - 2);
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++)
      for (int k = 0; k < K; k++)
        D[i][j][k] = (data_t)99; /* garbage: the kernel must initialise D */

  kernel();

  /* golden reference */
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++)
      for (int k = 0; k < K; k++) {
        data_t acc = 0;
        for (int l = 0; l < L; l++)
          for (int m = 0; m < M; m++)
            acc += A[i][l][m] * B[l][j] * C[m][k];
        D_ref[i][j][k] = acc;
      }

  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++)
      for (int k = 0; k < K; k++)
        if (mismatch((double)D_ref[i][j][k], (double)D[i][j][k])) {
          printf("FAIL at [%d][%d][%d]: expected %g got %g\n", i, j, k,
                 (double)D_ref[i][j][k], (double)D[i][j][k]);
          return 1;
        }
  printf("PASS\n");
  return 0;
}
