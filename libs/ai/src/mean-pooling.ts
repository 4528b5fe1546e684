import { l2Normalise } from '@engram/core';

/** Token ids of one batch, right-padded with 0 into a rows × cols matrix, as the model takes them. */
export interface PaddedBatch {
  rows: number;
  cols: number;
  inputIds: BigInt64Array;
  /** 1 over real tokens, 0 over padding, so attention ignores the padding. */
  attentionMask: BigInt64Array;
  /** Real tokens per row, for pooling over them only. */
  lengths: number[];
}

export function padBatch(tokenIds: readonly (readonly number[])[]): PaddedBatch {
  const rows = tokenIds.length;
  const cols = Math.max(1, ...tokenIds.map((ids) => ids.length));
  const inputIds = new BigInt64Array(rows * cols);
  const attentionMask = new BigInt64Array(rows * cols);
  tokenIds.forEach((ids, row) => {
    ids.forEach((id, col) => {
      inputIds[row * cols + col] = BigInt(id);
      attentionMask[row * cols + col] = 1n;
    });
  });
  return { rows, cols, inputIds, attentionMask, lengths: tokenIds.map((ids) => ids.length) };
}

/**
 * Sentence vectors from the model's token states ([rows, cols, dims], row-major): the mean over
 * each row's real tokens, L2-normalised. The sum stands in for the mean: normalising cancels the
 * division by the token count.
 */
export function meanPoolNormalised(
  hidden: Float32Array,
  batch: Pick<PaddedBatch, 'cols' | 'lengths'>,
  dims: number,
): Float32Array[] {
  return batch.lengths.map((length, row) => {
    const sum = new Float64Array(dims);
    for (let col = 0; col < length; col += 1) {
      const offset = (row * batch.cols + col) * dims;
      for (let d = 0; d < dims; d += 1) sum[d] += hidden[offset + d];
    }
    return l2Normalise(sum);
  });
}
