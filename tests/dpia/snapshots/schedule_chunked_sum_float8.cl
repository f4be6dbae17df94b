kernel void schedule_chunked_sum_float8_0(
    global const float* restrict xs,
    global float* restrict output,
    global float* restrict tmp2,
    const int N) {
  for (int gid3 = get_global_id(0); gid3 < N / 128; gid3 += get_global_size(0)) {
    {
      float8 acc4;
      acc4 = ((float8)0.0f);
      for (int i5 = 0; i5 < 16; i5 += 1) {
        acc4 = (acc4 + ((global const float8*)xs)[i5 + 16 * gid3]);
      }
      {
        float acc8;
        acc8 = 0.0f;
        acc8 = (acc8 + acc4.s0);
        acc8 = (acc8 + acc4.s1);
        acc8 = (acc8 + acc4.s2);
        acc8 = (acc8 + acc4.s3);
        acc8 = (acc8 + acc4.s4);
        acc8 = (acc8 + acc4.s5);
        acc8 = (acc8 + acc4.s6);
        acc8 = (acc8 + acc4.s7);
        tmp2[gid3] = acc8;
      }
    }
  }
}

kernel void schedule_chunked_sum_float8_1(
    global const float* restrict xs,
    global float* restrict output,
    global float* restrict tmp2,
    const int N) {
  {
    float acc1;
    acc1 = 0.0f;
    for (int i13 = 0; i13 < N / 128; i13 += 1) {
      acc1 = (acc1 + tmp2[i13]);
    }
    output[0] = acc1;
  }
}
