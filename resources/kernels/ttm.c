/*
 * ttm.c - tensor times matrix (mode-3 product):
 *     C[i][j][k] = sum_l A[i][j][l] * B[l][k]
 * A: I x J x L tensor, B: L x K matrix, C: I x J x K tensor.
 * Defaults: I = J = K = L = 256, float. Sizes and element type can be
 * overridden with -D, e.g. `-D I=16 -D J=16 -D K=16 -D L=16 -D DATA_T=int16_t`.
 */
#include <stdio.h>
#include <stdint.h>

#ifndef I
#define I 256
#endif
#ifndef J
#define J 256
#endif
#ifndef K
#define K 256
#endif
#ifndef L
#define L 256
#endif

#ifndef DATA_T
#define DATA_T float
#endif
typedef DATA_T data_t;

data_t A[I][J][L];
data_t B[L][K];
data_t C[I][J][K];
data_t C_ref[I][J][K];

/* The scop / endscop pragmas below delimit the static control part read by
 * the polyhedral front end; C compilers do not know them, so keep -Wall quiet. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas"

void kernel(void)
{
#pragma scop
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++)
      for (int k = 0; k < K; k++) {
        C[i][j][k] = 0;
        for (int l = 0; l < L; l++)
          C[i][j][k] += A[i][j][l] * B[l][k];
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
    for (int j = 0; j < J; j++)
      for (int l = 0; l < L; l++)
        A[i][j][l] = (data_t)(((i * 7 + j * 3 + l * 11) % 5) - 2);
  for (int l = 0; l < L; l++)
    for (int k = 0; k < K; k++)
      B[l][k] = (data_t)(((l * 3 + k * 2 + 1) % 5) - 2);
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++)
      for (int k = 0; k < K; k++)
        C[i][j][k] = (data_t)99; /* garbage: the kernel must initialise C */

  kernel();

  /* golden reference */
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++)
      for (int k = 0; k < K; k++) {
        data_t acc = 0;
        for (int l = 0; l < L; l++)
          acc += A[i][j][l] * B[l][k];
        C_ref[i][j][k] = acc;
      }

  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++)
      for (int k = 0; k < K; k++)
        if (mismatch((double)C_ref[i][j][k], (double)C[i][j][k])) {
          printf("FAIL at [%d][%d][%d]: expected %g got %g\n", i, j, k,
                 (double)C_ref[i][j][k], (double)C[i][j][k]);
          return 1;
        }
  printf("PASS\n");
  return 0;
}
