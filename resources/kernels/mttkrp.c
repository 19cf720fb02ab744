/*
 * mttkrp.c - matricised tensor times Khatri-Rao product (the MTTKRP benchmark
 * of AutoSA / Odyssey):
 *     D[i][j] = sum_{k,l} A[i][k][l] * B[k][j] * C[l][j]
 * A: I x K x L tensor, B: K x J, C: L x J, D: I x J. Defaults are the papers'
 * sizes (I = J = K = L = 512, float); override with -D, e.g.
 * `-D I=16 -D J=16 -D K=16 -D L=16 -D DATA_T=int16_t`.
 */
#include <stdio.h>
#include <stdint.h>

#ifndef I
#define I 512
#endif
#ifndef J
#define J 512
#endif
#ifndef K
#define K 512
#endif
#ifndef L
#define L 512
#endif

#ifndef DATA_T
#define DATA_T float
#endif
typedef DATA_T data_t;

data_t A[I][K][L];
data_t B[K][J];
data_t C[L][J];
data_t D[I][J];
data_t D_ref[I][J];

/* The scop / endscop pragmas below delimit the static control part read by
 * the polyhedral front end; C compilers do not know them, so keep -Wall quiet. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas"

void kernel(void)
{
#pragma scop
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++) {
      D[i][j] = 0;
      for (int k = 0; k < K; k++)
        for (int l = 0; l < L; l++)
          D[i][j] += A[i][k][l] * B[k][j] * C[l][j];
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
    for (int k = 0; k < K; k++)
      for (int l = 0; l < L; l++)
        A[i][k][l] = (data_t)(((i * 7 + k * 3 + l * 11) % 5) - 2);
  for (int k = 0; k < K; k++)
    for (int j = 0; j < J; j++)
      B[k][j] = (data_t)(((k * 3 + j * 2 + 1) % 5) - 2);
  for (int l = 0; l < L; l++)
    for (int j = 0; j < J; j++)
      C[l][j] = (data_t)(((l * 2 + j * 7 + 3) % 5) - 2);
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++)
      D[i][j] = (data_t)99; /* garbage: the kernel must initialise D */

  kernel();

  /* golden reference */
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++) {
      data_t acc = 0;
      for (int k = 0; k < K; k++)
        for (int l = 0; l < L; l++)
          acc += A[i][k][l] * B[k][j] * C[l][j];
      D_ref[i][j] = acc;
    }

  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++)
      if (mismatch((double)D_ref[i][j], (double)D[i][j])) {
        printf("FAIL at [%d][%d]: expected %g got %g\n", i, j,
               (double)D_ref[i][j], (double)D[i][j]);
        return 1;
      }
  printf("PASS\n");
  return 0;
}
