/**
 * Splits a byte stream into newline-terminated frames with a hard per-frame bound.
 * Bytes are split on 0x0A before any decoding, so multibyte UTF-8 survives chunking.
 * A frame longer than maxLineBytes is never buffered past the bound: its bytes are discarded up to
 * the next newline and reported once through onOversize. The buffer grows by doubling up to the bound.
 * A frame that lies whole inside one pushed chunk is handed out as a view of that chunk (no copy: this is
 * the hot path of native stream ingestion); only frames spanning chunks are assembled in the buffer.
 * The buffer exists only while a frame spans chunks, and one grown past its starting size is handed out
 * with the frame it holds rather than copied and kept: a splitter lives as long as its stream, and a
 * long-lived buffer sized for the largest frame seen would outlive the young generation as garbage-to-be.
 */
export interface LineSplitterOptions {
  readonly maxLineBytes: number;
  /**
   * A complete frame without its trailing "\n" (and without a trailing "\r"). It may be a view of the
   * pushed chunk: a caller that rewrites its chunks must copy frames it keeps beyond the call.
   */
  readonly onLine: (frame: Buffer) => void;
  /** A frame exceeded maxLineBytes; `discardedBytes` is known once its newline (or end) arrives. */
  readonly onOversize: (discardedBytes: number) => void;
}

export interface LineSplitter {
  push(chunk: Buffer): void;
  /** Flushes a final unterminated frame (if any). */
  end(): void;
}

const NEWLINE = 0x0a;
/** A frame spanning chunks is assembled in a buffer of this size, grown by doubling when a frame needs it. */
export const INITIAL_BYTES = 64 * 1024;
const EMPTY = Buffer.alloc(0);

export function createLineSplitter(options: LineSplitterOptions): LineSplitter {
  const { maxLineBytes, onLine, onOversize } = options;
  let buffer = EMPTY;
  let length = 0;
  let discarding = false;
  let discarded = 0;

  const emit = (frame: Buffer): void => {
    const end = frame.length > 0 && frame[frame.length - 1] === 0x0d ? frame.length - 1 : frame.length;
    onLine(end === frame.length ? frame : frame.subarray(0, end));
  };

  const append = (bytes: Buffer): boolean => {
    if (length + bytes.length > maxLineBytes) return false;
    if (length + bytes.length > buffer.length) {
      let size = Math.max(INITIAL_BYTES, buffer.length * 2);
      while (size < length + bytes.length) size *= 2;
      const grown = Buffer.allocUnsafe(Math.min(size, maxLineBytes + 1));
      buffer.copy(grown, 0, 0, length);
      buffer = grown;
    }
    bytes.copy(buffer, length);
    length += bytes.length;
    return true;
  };

  /** A buffer at its starting size is reused, so its frame is copied out; a grown one goes with its frame. */
  const emitAssembled = (): void => {
    const grown = buffer.length > INITIAL_BYTES;
    const frame = grown ? buffer.subarray(0, length) : Buffer.from(buffer.subarray(0, length));
    if (grown) buffer = EMPTY;
    length = 0;
    emit(frame);
  };

  return {
    push(chunk) {
      let start = 0;
      while (start < chunk.length) {
        const nl = chunk.indexOf(NEWLINE, start);
        if (nl !== -1 && length === 0 && !discarding) {
          if (nl - start > maxLineBytes) onOversize(nl - start);
          else emit(chunk.subarray(start, nl));
          start = nl + 1;
          continue;
        }
        const piece = chunk.subarray(start, nl === -1 ? chunk.length : nl);
        if (discarding) {
          discarded += piece.length;
        } else if (!append(piece)) {
          discarding = true;
          discarded = length + piece.length;
          length = 0;
          // Its bytes are dropped: a buffer grown for this frame would only hold memory until the next one.
          if (buffer.length > INITIAL_BYTES) buffer = EMPTY;
        }
        if (nl === -1) return;
        start = nl + 1;
        if (discarding) {
          discarding = false;
          onOversize(discarded);
          discarded = 0;
        } else {
          emitAssembled();
        }
      }
    },
    end() {
      if (discarding) {
        discarding = false;
        onOversize(discarded);
      } else if (length > 0) {
        emitAssembled();
      }
      length = 0;
      buffer = EMPTY;
    },
  };
}
