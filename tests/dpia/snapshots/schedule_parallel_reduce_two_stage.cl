kernel void schedule_parallel_reduce_two_stage_0(
    global const float* restrict xs,
    global float* restrict output,
    global float* restrict tmp2,
    global float* restrict tmp3,
    const int N) {
  local float tmp6[32] __attribute__((aligned(16)));
  local float tmp13[16] __attribute__((aligned(16)));
  local float tmp20[8] __attribute__((aligned(16)));
  local float tmp27[4] __attribute__((aligned(16)));
  local float tmp34[2] __attribute__((aligned(16)));
  local float tmp41[1] __attribute__((aligned(16)));
  {
    const int wg4 = get_group_id(0);
    if (wg4 < N / 256) {
      for (int lid7 = get_local_id(0); lid7 < 32; lid7 += get_local_size(0)) {
        {
          float acc9;
          acc9 = 0.0f;
          for (int i10 = 0; i10 < 8; i10 += 1) {
            acc9 = (acc9 + xs[256 * wg4 + lid7 + 32 * i10]);
          }
          tmp6[lid7] = acc9;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid14 = get_local_id(0); lid14 < 16; lid14 += get_local_size(0)) {
        {
          float acc16;
          acc16 = 0.0f;
          for (int i17 = 0; i17 < 2; i17 += 1) {
            acc16 = (acc16 + tmp6[lid14 + 16 * i17]);
          }
          tmp13[lid14] = acc16;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid21 = get_local_id(0); lid21 < 8; lid21 += get_local_size(0)) {
        {
          float acc23;
          acc23 = 0.0f;
          for (int i24 = 0; i24 < 2; i24 += 1) {
            acc23 = (acc23 + tmp13[lid21 + 8 * i24]);
          }
          tmp20[lid21] = acc23;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid28 = get_local_id(0); lid28 < 4; lid28 += get_local_size(0)) {
        {
          float acc30;
          acc30 = 0.0f;
          for (int i31 = 0; i31 < 2; i31 += 1) {
            acc30 = (acc30 + tmp20[lid28 + 4 * i31]);
          }
          tmp27[lid28] = acc30;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid35 = get_local_id(0); lid35 < 2; lid35 += get_local_size(0)) {
        {
          float acc37;
          acc37 = 0.0f;
          for (int i38 = 0; i38 < 2; i38 += 1) {
            acc37 = (acc37 + tmp27[lid35 + 2 * i38]);
          }
          tmp34[lid35] = acc37;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid42 = get_local_id(0); lid42 < 1; lid42 += get_local_size(0)) {
        {
          float acc44;
          acc44 = 0.0f;
          for (int i45 = 0; i45 < 2; i45 += 1) {
            acc44 = (acc44 + tmp34[2 * lid42 + i45]);
          }
          tmp41[lid42] = acc44;
        }
      }
      {
        float acc5;
        acc5 = 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        acc5 = (acc5 + tmp41[0]);
        if ((get_local_id(0) == 0)) {
          tmp3[wg4] = acc5;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
}

kernel void schedule_parallel_reduce_two_stage_1(
    global const float* restrict xs,
    global float* restrict output,
    global float* restrict tmp2,
    global float* restrict tmp3,
    const int N) {
  local float tmp53[4] __attribute__((aligned(16)));
  local float tmp60[2] __attribute__((aligned(16)));
  local float tmp67[1] __attribute__((aligned(16)));
  {
    const int wg51 = get_group_id(0);
    if (wg51 < N / 1024) {
      for (int lid54 = get_local_id(0); lid54 < 4; lid54 += get_local_size(0)) {
        {
          float acc56;
          acc56 = 0.0f;
          acc56 = (acc56 + tmp3[4 * wg51 + lid54]);
          tmp53[lid54] = acc56;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid61 = get_local_id(0); lid61 < 2; lid61 += get_local_size(0)) {
        {
          float acc63;
          acc63 = 0.0f;
          for (int i64 = 0; i64 < 2; i64 += 1) {
            acc63 = (acc63 + tmp53[lid61 + 2 * i64]);
          }
          tmp60[lid61] = acc63;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid68 = get_local_id(0); lid68 < 1; lid68 += get_local_size(0)) {
        {
          float acc70;
          acc70 = 0.0f;
          for (int i71 = 0; i71 < 2; i71 += 1) {
            acc70 = (acc70 + tmp60[2 * lid68 + i71]);
          }
          tmp67[lid68] = acc70;
        }
      }
      {
        float acc52;
        acc52 = 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        acc52 = (acc52 + tmp67[0]);
        if ((get_local_id(0) == 0)) {
          tmp2[wg51] = acc52;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
}

kernel void schedule_parallel_reduce_two_stage_2(
    global const float* restrict xs,
    global float* restrict output,
    global float* restrict tmp2,
    global float* restrict tmp3,
    const int N) {
  {
    float acc1;
    acc1 = 0.0f;
    for (int i77 = 0; i77 < N / 1024; i77 += 1) {
      acc1 = (acc1 + tmp2[i77]);
    }
    output[0] = acc1;
  }
}
