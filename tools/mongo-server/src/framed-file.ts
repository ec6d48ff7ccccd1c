// Reads a file of length-prefixed frames (the data file's BSON documents, the journal's records) in
// chunks of 8 MiB, each read into a buffer of its own, so that loading a large file does not need
// it whole in memory at once; `onFrame` gets a view into a chunk (which it may keep).
import { promises as fs } from 'node:fs';

/**
 * What the bytes at `at` are: a complete, valid frame (its length), the start of one that needs more
 * bytes, or bytes that are not a frame.
 */
export type FrameCheck = (buf: Buffer, at: number, available: number) => number | 'more' | 'bad';

export interface FramesRead {
  /** File offset just after the last good frame. */
  end: number;
  size: number;
  /** 'eof': the file ends after a good frame; 'incomplete': it ends inside one; 'bad': not a frame. */
  stop: 'eof' | 'incomplete' | 'bad';
}

const CHUNK = 8 * 1024 * 1024;
/** Room before each chunk for the end of the previous one: most frames are far shorter. */
const CARRY = 256 * 1024;

export async function readFrames(
  file: string,
  check: FrameCheck,
  onFrame: (frame: Buffer, offset: number) => void,
): Promise<FramesRead> {
  const handle = await fs.open(file, 'r');
  // The next chunk is read while the frames of this one are handled, so that reading (done by
  // libuv's threads) and handling overlap instead of taking turns. It is read after a gap of
  // CARRY bytes, where the frame cut by this chunk's end is then copied, in front of the rest of it.
  let reading: Promise<{ buf: Buffer; length: number }> | undefined;
  try {
    const size = (await handle.stat()).size;
    let readPos = 0;
    // One read at a time: the next is started only once this one has ended, so `readPos` moves on
    // by what was read. A read may return fewer bytes than asked (the file cut meanwhile); the
    // chunk is then what was read, and the next read finds the end.
    const fill = async (length: number) => {
      const buf = Buffer.allocUnsafe(CARRY + length);
      let got = 0;
      while (got < length) {
        const { bytesRead } = await handle.read(buf, CARRY + got, length - got, readPos + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      readPos += got;
      return { buf, length: got };
    };
    const readChunk = () => (readPos >= size ? undefined : fill(Math.min(CHUNK, size - readPos)));
    let buf: Buffer = Buffer.alloc(0);
    let bufStart = 0; // file offset of buf[0]
    let at = 0;
    reading = readChunk();
    for (;;) {
      for (;;) {
        const r = check(buf, at, buf.length - at);
        if (r === 'bad') return { end: bufStart + at, size, stop: 'bad' };
        if (r === 'more') break;
        onFrame(buf.subarray(at, at + r), bufStart + at);
        at += r;
      }
      if (!reading) {
        return { end: bufStart + at, size, stop: at === buf.length ? 'eof' : 'incomplete' };
      }
      const next = await reading;
      reading = undefined;
      if (next.length === 0) return { end: bufStart + at, size, stop: 'incomplete' };
      reading = readChunk();
      const rest = buf.length - at;
      bufStart += at;
      const end = CARRY + next.length;
      if (rest <= CARRY) {
        buf.copy(next.buf, CARRY - rest, at);
        buf = next.buf.subarray(CARRY - rest, end);
      } else {
        // A frame longer than the gap (a document of more than CARRY bytes) cut by the end.
        buf = Buffer.concat([buf.subarray(at), next.buf.subarray(CARRY, end)]);
      }
      at = 0;
    }
  } finally {
    // A read still under way (an early return) must end before the file is closed.
    await reading?.catch(() => undefined);
    await handle.close();
  }
}

/** The bytes of `file` from `offset` to its end. */
export async function readFrom(file: string, offset: number): Promise<Buffer> {
  const handle = await fs.open(file, 'r');
  try {
    const size = (await handle.stat()).size;
    const buf = Buffer.alloc(Math.max(0, size - offset));
    let got = 0;
    while (got < buf.length) {
      const { bytesRead } = await handle.read(buf, got, buf.length - got, offset + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return buf.subarray(0, got);
  } finally {
    await handle.close();
  }
}

/** fsync of a directory, so that a file created, renamed or removed in it stays so after a crash. */
export async function syncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await fs.open(dir, 'r');
  } catch {
    return; // not every platform lets a directory be opened; best effort there
  }
  try {
    await handle.sync();
  } catch {
    /* directory fsync unsupported here */
  } finally {
    await handle.close();
  }
}
