float dpia_tf32_float(float x) {
  return select(x, as_float((as_uint(x) + 0x1000u) & 0xffffe000u), isfinite(x));
}
kernel void mma_sync_fragments(
    global const float* restrict cs,
    global const float* restrict as_,
    global const float* restrict bs,
    global float* restrict output,
    const int N) {
  {
    const int wg1 = get_group_id(0);
    if (wg1 < N) {
      for (int lane2 = get_local_id(0); lane2 < 32; lane2 += get_local_size(0)) {
        {
          float mma3;
          float mma4;
          float mma5;
          float mma6;
          float common1;
          float common2;
          float common3;
          float common4;
          float common5;
          float common6;
          float common7;
          float common8;
          float common9;
          float common10;
          float common11;
          float common12;
          float common13;
          float common14;
          float common15;
          float common16;
          float common17;
          float common18;
          float common19;
          float common20;
          float common21;
          float common22;
          float common23;
          float common24;
          float common25;
          float common26;
          float common27;
          float common28;
          float common29;
          float common30;
          float common31;
          float common32;
          mma3 = cs[128 * wg1 + 2 * lane2];
          common1 = dpia_tf32_float(as_[8 * ((lane2 / 4) % 8) + 128 * wg1]);
          common2 = dpia_tf32_float(bs[16 * (lane2 % 4) + 64 * wg1]);
          mma3 = (mma3 + (common1 * common2));
          common3 = dpia_tf32_float(as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 1]);
          common4 = dpia_tf32_float(bs[16 * (lane2 % 4) + 64 * wg1 + 1]);
          mma3 = (mma3 + (common3 * common4));
          common5 = dpia_tf32_float(as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 2]);
          common6 = dpia_tf32_float(bs[16 * (lane2 % 4) + 64 * wg1 + 2]);
          mma3 = (mma3 + (common5 * common6));
          common7 = dpia_tf32_float(as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 3]);
          common8 = dpia_tf32_float(bs[16 * (lane2 % 4) + 64 * wg1 + 3]);
          mma3 = (mma3 + (common7 * common8));
          common9 = dpia_tf32_float(as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 4]);
          common10 = dpia_tf32_float(bs[16 * (lane2 % 4) + 64 * wg1 + 4]);
          mma3 = (mma3 + (common9 * common10));
          common11 = dpia_tf32_float(as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 5]);
          common12 = dpia_tf32_float(bs[16 * (lane2 % 4) + 64 * wg1 + 5]);
          mma3 = (mma3 + (common11 * common12));
          common13 = dpia_tf32_float(as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 6]);
          common14 = dpia_tf32_float(bs[16 * (lane2 % 4) + 64 * wg1 + 6]);
          mma3 = (mma3 + (common13 * common14));
          common15 = dpia_tf32_float(as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 7]);
          common16 = dpia_tf32_float(bs[16 * (lane2 % 4) + 64 * wg1 + 7]);
          mma3 = (mma3 + (common15 * common16));
          mma4 = cs[128 * wg1 + 2 * lane2 + 1];
          common17 = dpia_tf32_float(bs[16 * (lane2 % 4) + 64 * wg1 + 8]);
          mma4 = (mma4 + (common1 * common17));
          common18 = dpia_tf32_float(bs[16 * (lane2 % 4) + 64 * wg1 + 9]);
          mma4 = (mma4 + (common3 * common18));
          common19 = dpia_tf32_float(bs[16 * (lane2 % 4) + 64 * wg1 + 10]);
          mma4 = (mma4 + (common5 * common19));
          common20 = dpia_tf32_float(bs[16 * (lane2 % 4) + 64 * wg1 + 11]);
          mma4 = (mma4 + (common7 * common20));
          common21 = dpia_tf32_float(bs[16 * (lane2 % 4) + 64 * wg1 + 12]);
          mma4 = (mma4 + (common9 * common21));
          common22 = dpia_tf32_float(bs[16 * (lane2 % 4) + 64 * wg1 + 13]);
          mma4 = (mma4 + (common11 * common22));
          common23 = dpia_tf32_float(bs[16 * (lane2 % 4) + 64 * wg1 + 14]);
          mma4 = (mma4 + (common13 * common23));
          common24 = dpia_tf32_float(bs[16 * (lane2 % 4) + 64 * wg1 + 15]);
          mma4 = (mma4 + (common15 * common24));
          mma5 = cs[128 * wg1 + 2 * lane2 + 64];
          common25 = dpia_tf32_float(as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 64]);
          mma5 = (mma5 + (common25 * common2));
          common26 = dpia_tf32_float(as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 65]);
          mma5 = (mma5 + (common26 * common4));
          common27 = dpia_tf32_float(as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 66]);
          mma5 = (mma5 + (common27 * common6));
          common28 = dpia_tf32_float(as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 67]);
          mma5 = (mma5 + (common28 * common8));
          common29 = dpia_tf32_float(as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 68]);
          mma5 = (mma5 + (common29 * common10));
          common30 = dpia_tf32_float(as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 69]);
          mma5 = (mma5 + (common30 * common12));
          common31 = dpia_tf32_float(as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 70]);
          mma5 = (mma5 + (common31 * common14));
          common32 = dpia_tf32_float(as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 71]);
          mma5 = (mma5 + (common32 * common16));
          mma6 = cs[128 * wg1 + 2 * lane2 + 65];
          mma6 = (mma6 + (common25 * common17));
          mma6 = (mma6 + (common26 * common18));
          mma6 = (mma6 + (common27 * common19));
          mma6 = (mma6 + (common28 * common20));
          mma6 = (mma6 + (common29 * common21));
          mma6 = (mma6 + (common30 * common22));
          mma6 = (mma6 + (common31 * common23));
          mma6 = (mma6 + (common32 * common24));
          output[128 * wg1 + 2 * lane2] = mma3;
          output[128 * wg1 + 2 * lane2 + 1] = mma4;
          output[128 * wg1 + 2 * lane2 + 64] = mma5;
          output[128 * wg1 + 2 * lane2 + 65] = mma6;
        }
      }
    }
  }
}
