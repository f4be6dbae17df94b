kernel void mma_sync_fragments(
    global const float* restrict cs,
    global const float* restrict as_,
    global const float* restrict bs,
    global float* restrict output,
    const int N) {
  for (int wg1 = get_group_id(0); wg1 < N; wg1 += get_num_groups(0)) {
    for (int lane2 = get_local_id(0); lane2 < 32; lane2 += get_local_size(0)) {
      {
        float mma3;
        float mma4;
        float mma5;
        float mma6;
        mma3 = cs[128 * wg1 + 2 * lane2];
        mma3 = (mma3 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1] * bs[16 * (lane2 % 4) + 64 * wg1]));
        mma3 = (mma3 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 1] * bs[16 * (lane2 % 4) + 64 * wg1 + 1]));
        mma3 = (mma3 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 2] * bs[16 * (lane2 % 4) + 64 * wg1 + 2]));
        mma3 = (mma3 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 3] * bs[16 * (lane2 % 4) + 64 * wg1 + 3]));
        mma3 = (mma3 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 4] * bs[16 * (lane2 % 4) + 64 * wg1 + 4]));
        mma3 = (mma3 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 5] * bs[16 * (lane2 % 4) + 64 * wg1 + 5]));
        mma3 = (mma3 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 6] * bs[16 * (lane2 % 4) + 64 * wg1 + 6]));
        mma3 = (mma3 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 7] * bs[16 * (lane2 % 4) + 64 * wg1 + 7]));
        mma4 = cs[128 * wg1 + 2 * lane2 + 1];
        mma4 = (mma4 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1] * bs[16 * (lane2 % 4) + 64 * wg1 + 8]));
        mma4 = (mma4 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 1] * bs[16 * (lane2 % 4) + 64 * wg1 + 9]));
        mma4 = (mma4 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 2] * bs[16 * (lane2 % 4) + 64 * wg1 + 10]));
        mma4 = (mma4 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 3] * bs[16 * (lane2 % 4) + 64 * wg1 + 11]));
        mma4 = (mma4 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 4] * bs[16 * (lane2 % 4) + 64 * wg1 + 12]));
        mma4 = (mma4 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 5] * bs[16 * (lane2 % 4) + 64 * wg1 + 13]));
        mma4 = (mma4 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 6] * bs[16 * (lane2 % 4) + 64 * wg1 + 14]));
        mma4 = (mma4 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 7] * bs[16 * (lane2 % 4) + 64 * wg1 + 15]));
        mma5 = cs[128 * wg1 + 2 * lane2 + 64];
        mma5 = (mma5 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 64] * bs[16 * (lane2 % 4) + 64 * wg1]));
        mma5 = (mma5 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 65] * bs[16 * (lane2 % 4) + 64 * wg1 + 1]));
        mma5 = (mma5 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 66] * bs[16 * (lane2 % 4) + 64 * wg1 + 2]));
        mma5 = (mma5 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 67] * bs[16 * (lane2 % 4) + 64 * wg1 + 3]));
        mma5 = (mma5 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 68] * bs[16 * (lane2 % 4) + 64 * wg1 + 4]));
        mma5 = (mma5 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 69] * bs[16 * (lane2 % 4) + 64 * wg1 + 5]));
        mma5 = (mma5 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 70] * bs[16 * (lane2 % 4) + 64 * wg1 + 6]));
        mma5 = (mma5 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 71] * bs[16 * (lane2 % 4) + 64 * wg1 + 7]));
        mma6 = cs[128 * wg1 + 2 * lane2 + 65];
        mma6 = (mma6 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 64] * bs[16 * (lane2 % 4) + 64 * wg1 + 8]));
        mma6 = (mma6 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 65] * bs[16 * (lane2 % 4) + 64 * wg1 + 9]));
        mma6 = (mma6 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 66] * bs[16 * (lane2 % 4) + 64 * wg1 + 10]));
        mma6 = (mma6 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 67] * bs[16 * (lane2 % 4) + 64 * wg1 + 11]));
        mma6 = (mma6 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 68] * bs[16 * (lane2 % 4) + 64 * wg1 + 12]));
        mma6 = (mma6 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 69] * bs[16 * (lane2 % 4) + 64 * wg1 + 13]));
        mma6 = (mma6 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 70] * bs[16 * (lane2 % 4) + 64 * wg1 + 14]));
        mma6 = (mma6 + (as_[8 * ((lane2 / 4) % 8) + 128 * wg1 + 71] * bs[16 * (lane2 % 4) + 64 * wg1 + 15]));
        output[128 * wg1 + 2 * lane2] = mma3;
        output[128 * wg1 + 2 * lane2 + 1] = mma4;
        output[128 * wg1 + 2 * lane2 + 64] = mma5;
        output[128 * wg1 + 2 * lane2 + 65] = mma6;
      }
    }
  }
}
