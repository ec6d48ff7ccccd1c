import { z } from 'zod';
import { COMPONENT_SCHEMA_REF, componentSchemas } from '../src/index';

const code = z.string().min(1).meta({ id: 'TestCode' });
const item = z.object({ code, label: z.string() }).meta({ id: 'TestItem' });
const list = z.object({ items: z.array(item), first: code });

describe('componentSchemas', () => {
  it('when schemas share a named part, then it is one component and every reference points at the components', () => {
    const { defs, properties } = componentSchemas({ item, list }, 'output');
    expect(Object.keys(defs).sort()).toEqual(['TestCode', 'TestItem']);
    expect(defs.TestItem).toMatchObject({
      properties: { code: { $ref: `${COMPONENT_SCHEMA_REF}TestCode` } },
    });
    expect(properties.item).toEqual({ $ref: `${COMPONENT_SCHEMA_REF}TestItem` });
    expect(properties.list).toMatchObject({
      properties: {
        items: { items: { $ref: `${COMPONENT_SCHEMA_REF}TestItem` } },
        first: { $ref: `${COMPONENT_SCHEMA_REF}TestCode` },
      },
    });
    expect(JSON.stringify({ defs, properties })).not.toContain('#/$defs/');
  });

  it('when a transform is described, then io chooses its input or its output side', () => {
    const length = z.string().transform((s) => s.length);
    expect(componentSchemas({ length }, 'input').properties.length).toMatchObject({
      type: 'string',
    });
    expect(componentSchemas({ length }, 'output').properties.length).not.toMatchObject({
      type: 'string',
    });
  });
});
