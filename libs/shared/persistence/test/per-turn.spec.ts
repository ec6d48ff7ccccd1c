import { setImmediate as nextTurn } from 'node:timers/promises';
import { perTurn } from '../src';

describe('perTurn', () => {
  it('when items are added in one turn, then each key gets them together after it, in order, at most max at a time; a later turn is handed over apart', async () => {
    const sent: Array<[string, number[]]> = [];
    const turn = perTurn<string, number>((key, items) => sent.push([key, items]), { max: 2 });
    turn.add('a', 1);
    turn.add('b', 2);
    turn.add('a', 3);
    turn.add('a', 4);
    expect(sent).toEqual([]);
    await nextTurn();
    expect(sent).toEqual([
      ['a', [1, 3]],
      ['a', [4]],
      ['b', [2]],
    ]);
    turn.add('a', 5);
    await nextTurn();
    expect(sent.slice(3)).toEqual([['a', [5]]]);
  });

  it('when a wrap is given, then the hand-over runs inside it', async () => {
    const wrapped: boolean[] = [];
    let inside = false;
    const turn = perTurn<string, number>(() => wrapped.push(inside), {
      max: 10,
      wrap: (flush) => {
        inside = true;
        flush();
        inside = false;
      },
    });
    turn.add('a', 1);
    await nextTurn();
    expect(wrapped).toEqual([true]);
  });
});
