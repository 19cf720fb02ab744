/*
 * cnn.c - one convolutional layer (the CNN benchmark of AutoSA / Odyssey):
 *     fo[o][h][w] = sum_{i,p,q} fi[i][h + p][w + q] * wt[o][i][p][q]
 * O output / I input channels, H x W output, P x Q filter, fi: I x (H+P-1) x (W+Q-1).
 * Defaults are the papers' sizes (O = I = 512, H = W = 56, P = Q = 3, float);
 * override with -D, e.g. `-D O=16 -D I=16 -D H=16 -D W=16 -D DATA_T=int16_t`.
 */
#include <stdio.h>
#include <stdint.h>

#ifndef O
#define O 512
#endif
#ifndef H
#define H 56
#endif
#ifndef W
#define W 56
#endif
#ifndef I
#define I 512
#endif
#ifndef P
#define P 3
#endif
#ifndef Q
#define Q 3
#endif

#ifndef DATA_T
#define DATA_T float
#endif
typedef DATA_T data_t;

data_t fi[I][H + P - 1][W + Q - 1];
data_t wt[O][I][P][Q];
data_t fo[O][H][W];
data_t fo_ref[O][H][W];

/* The scop / endscop pragmas below delimit the static control part read by
 * the polyhedral front end; C compilers do not know them, so keep -Wall quiet. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas"

void kernel(void)
{
#pragma scop
  for (int o = 0; o < O; o++)
    for (int h = 0; h < H; h++)
      for (int w = 0; w < W; w++) {
        fo[o][h][w] = 0;
        for (int i = 0; i < I; i++)
          for (int p = 0; p < P; p++)
            for (int q = 0; q < Q; q++)
              fo[o][h][w] += fi[i][h + p][w + q] * wt[o][i][p][q];
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
    for (int r = 0; r < H + P - 1; r++)
      for (int c = 0; c < W + Q - 1; c++)
        fi[i][r][c] = (data_t)(((i * 7 + r * 3 + c * 11) % 5) - 2);
  for (int o = 0; o < O; o++)
    for (int i = 0; i < I; i++)
      for (int p = 0; p < P; p++)
        for (int q = 0; q < Q; q++)
          wt[o][i][p][q] = (data_t)(((o * 3 + i * 2 + p * 7 + q + 1) % 5) - 2);
  for (int o = 0; o < O; o++)
    for (int h = 0; h < H; h++)
      for (int w = 0; w < W; w++)
        fo[o][h][w] = (data_t)99; /* garbage: the kernel must initialise fo */

  kernel();

  /* golden reference */
  for (int o = 0; o < O; o++)
    for (int h = 0; h < H; h++)
      for (int w = 0; w < W; w++) {
        data_t acc = 0;
        for (int i = 0; i < I; i++)
          for (int p = 0; p < P; p++)
            for (int q = 0; q < Q; q++)
              acc += fi[i][h + p][w + q] * wt[o][i][p][q];
        fo_ref[o][h][w] = acc;
      }

  for (int o = 0; o < O; o++)
    for (int h = 0; h < H; h++)
      for (int w = 0; w < W; w++)
        if (mismatch((double)fo_ref[o][h][w], (double)fo[o][h][w])) {
          printf("FAIL at [%d][%d][%d]: expected %g got %g\n", o, h, w,
                 (double)fo_ref[o][h][w], (double)fo[o][h][w]);
          return 1;
        }
  printf("PASS\n");
  return 0;
}
