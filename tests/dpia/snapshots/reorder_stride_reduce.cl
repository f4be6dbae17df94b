kernel void reorder_stride_reduce(
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  {
    const int wg1 = get_group_id(0);
    if (wg1 < N / 64) {
      for (int lid2 = get_local_id(0); lid2 < 16; lid2 += get_local_size(0)) {
        {
          float acc3;
          acc3 = 0.0f;
          for (int i4 = 0; i4 < 4; i4 += 1) {
            acc3 = (acc3 + xs[64 * wg1 + lid2 + 16 * i4]);
          }
          output[16 * wg1 + lid2] = acc3;
        }
      }
    }
  }
}
