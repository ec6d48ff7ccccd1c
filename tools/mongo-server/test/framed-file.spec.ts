// readFrames reads a file of length-prefixed frames in 8 MiB chunks, the next one while the frames
// of this one are handled; a frame cut by a chunk's end is put back together in front of the next
// chunk. Every frame must come out whole, with its file offset, wherever the cuts fall.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readFrames, type FrameCheck } from '../src/framed-file';

const MIB = 1024 * 1024;

/** Frames as the snapshot's: an int32 LE length (of the whole frame) first. */
const check: FrameCheck = (buf, at, available) => {
  if (available < 4) return 'more';
  const size = buf.readInt32LE(at);
  if (size < 5) return 'bad';
  return available < size ? 'more' : size;
};

/** A frame of `size` bytes whose body is its index, repeated. */
function frame(size: number, i: number): Buffer {
  const f = Buffer.alloc(size, i % 251);
  f.writeInt32LE(size, 0);
  return f;
}

async function withFile(bytes: Buffer, run: (file: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'framed-file-'));
  try {
    const file = path.join(dir, 'frames');
    await writeFile(file, bytes);
    await run(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('readFrames', () => {
  it('when frames of every size straddle the chunks, then each is read whole at its offset', async () => {
    // Small frames, one of 1 MiB (longer than the room kept for a cut frame) and one of 9 MiB
    // (longer than a chunk), so that cuts fall inside each kind.
    const sizes: number[] = [];
    for (let i = 0; i < 12_000; i++) sizes.push(300 + ((i * 7919) % 1500));
    sizes.splice(4000, 0, MIB);
    sizes.splice(9000, 0, 9 * MIB);
    const frames = sizes.map((s, i) => frame(s, i));
    const bytes = Buffer.concat(frames);
    expect(bytes.length).toBeGreaterThan(2 * 8 * MIB);

    await withFile(bytes, async (file) => {
      const seen: { offset: number; frame: Buffer }[] = [];
      const read = await readFrames(file, check, (f, offset) => seen.push({ offset, frame: f }));

      expect(read).toEqual({ end: bytes.length, size: bytes.length, stop: 'eof' });
      expect(seen).toHaveLength(frames.length);
      let offset = 0;
      for (const [i, f] of frames.entries()) {
        const got = seen[i] as { offset: number; frame: Buffer };
        expect(got.offset).toBe(offset);
        expect(got.frame.equals(f)).toBe(true);
        offset += f.length;
      }
    });
  });

  it('when the file ends inside a frame past the first chunk, then the read stops after the last whole one', async () => {
    const frames = Array.from({ length: 20_000 }, (_, i) => frame(700, i));
    const whole = Buffer.concat(frames);
    const cut = whole.subarray(0, whole.length - 300);

    await withFile(cut, async (file) => {
      let n = 0;
      const read = await readFrames(file, check, () => n++);

      expect(read).toEqual({ end: whole.length - 700, size: cut.length, stop: 'incomplete' });
      expect(n).toBe(frames.length - 1);
    });
  });

  it('when a frame past the first chunk is not a frame, then the read stops there', async () => {
    const frames = Array.from({ length: 20_000 }, (_, i) => frame(700, i));
    const bad = 15_000;
    (frames[bad] as Buffer).writeInt32LE(2, 0);
    const bytes = Buffer.concat(frames);

    await withFile(bytes, async (file) => {
      let n = 0;
      const read = await readFrames(file, check, () => n++);

      expect(read).toEqual({ end: bad * 700, size: bytes.length, stop: 'bad' });
      expect(n).toBe(bad);
    });
  });
});
