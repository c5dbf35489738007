/** A write side that survives its reader vanishing: after EPIPE it drops writes instead of throwing. */
import type { Writable } from 'node:stream';

export interface Sink {
  write(chunk: Buffer | string): void;
  /** Ends and closes the fd; resolves once flushed or once the reader is known gone. */
  end(): Promise<void>;
}

export function createSink(stream: Writable): Sink {
  let broken = false;
  stream.on('error', () => {
    broken = true;
  });
  return {
    write(chunk) {
      if (!broken) stream.write(chunk);
    },
    end() {
      return new Promise((resolve) => {
        if (broken || stream.destroyed) {
          resolve();
          return;
        }
        const finish = (): void => {
          stream.destroy();
          resolve();
        };
        stream.once('error', finish);
        stream.end(finish);
      });
    },
  };
}
