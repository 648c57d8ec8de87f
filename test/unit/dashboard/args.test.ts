import { describe, expect, it } from 'vitest';
import { type FlagSpecs, oneOf, parseFlags, UsageError, usageLine, wholeNumber } from '#dashboard/args';

const SPECS: FlagSpecs = {
  project: { required: true, placeholder: 'ID' },
  count: { placeholder: 'N' },
  notes: { placeholder: 'TEXT' },
  disabled: { kind: 'switch' },
};

const parse = (...argv: string[]) => parseFlags('keys issue', argv, SPECS);

describe('parseFlags', () => {
  it('reads --name value, --name=value and switches', () => {
    const flags = parse('--project', 'prj_1', '--count=3', '--disabled');
    expect(flags.required('project')).toBe('prj_1');
    expect(flags.optional('count')).toBe('3');
    expect(flags.optional('notes')).toBeUndefined();
    expect(flags.switch('disabled')).toBe(true);
  });

  it('takes an empty value and, through =, a value that starts with --', () => {
    const flags = parse('--project', 'p', '--notes', '');
    expect(flags.optional('notes')).toBe('');
    expect(parse('--project', 'p', '--notes=--verbose').optional('notes')).toBe('--verbose');
  });

  it.each([
    [['--project', 'p', '--colour', 'red'], /Unknown flag --colour for "keys issue"; usage: keys issue --project ID/],
    [['--project', 'p', '--constructor', 'x'], /Unknown flag --constructor/],
    [['--project', 'p', '--project', 'q'], /--project is given more than once/],
    [['--project'], /--project needs a value \(ID\)/],
    [['--project', '--count', '2'], /--project needs a value/],
    [['--project', 'p', '--disabled=yes'], /--disabled is a switch and takes no value/],
    [['--project', 'p', 'extra'], /Unexpected argument "extra"/],
    [['--project', 'p', '-c', '2'], /Unexpected argument "-c"/],
    [['--count', '2'], /"keys issue" needs --project; usage:/],
  ])('rejects %j with a one-line message', (argv, message) => {
    let error: unknown;
    try {
      parse(...argv);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });
});

describe('usageLine', () => {
  it('lists required flags bare and optional flags and switches in brackets', () => {
    expect(usageLine('keys issue', SPECS)).toBe('keys issue --project ID [--count N] [--notes TEXT] [--disabled]');
  });
});

describe('wholeNumber', () => {
  it('accepts plain decimal whole numbers within the range', () => {
    expect(wholeNumber('count', '10000', { min: 1, max: 10_000 })).toBe(10_000);
    expect(wholeNumber('count', '1', { min: 1, max: 10_000 })).toBe(1);
  });

  it.each(['0', '10001', '-1', '1.5', '1e3', '0x10', ' 7', '', 'abc', '99999999999999999'])('rejects "%s" naming the flag and range', (text) => {
    expect(() => wholeNumber('count', text, { min: 1, max: 10_000 })).toThrow(`--count must be a whole number from 1 to 10000; got "${text}"`);
  });
});

describe('oneOf', () => {
  it('accepts an allowed value and rejects any other, listing the allowed ones', () => {
    expect(oneOf('plan', 'pro', ['business', 'pro', 'free'])).toBe('pro');
    expect(() => oneOf('plan', 'Business', ['business', 'pro', 'free'])).toThrow('--plan must be one of business, pro, free; got "Business"');
  });
});
