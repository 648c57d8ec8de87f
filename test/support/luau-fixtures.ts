/**
 * Scripts for the hidden mark's tests and bench: obfuscated-like ones (an encrypted string table, everything on one
 * long line, as Luraph or Prometheus write it) and readable ones (lines, indentation, comments, long strings). Each
 * runs in the Lua runner (Lua 5.3 with bit32) and returns a checksum of what it computed, so a stamped copy can be
 * shown to do exactly what the unstamped one does.
 */

/** A small deterministic generator (mulberry32), so a fixture is the same for the same seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const int = (random: () => number, below: number) => Math.floor(random() * below);

/**
 * An obfuscated-like script of about `bytes` bytes: encrypted strings, a decoder, VM-like statements, on one line;
 * with `long: true` also long strings and long comments between them, and a line break now and then.
 */
export function obfuscatedScript(seed: number, bytes: number, options: { long?: boolean } = {}): string {
  const random = seededRandom(seed);
  const key = 1 + int(random, 250);
  const strings: string[] = [];
  for (let i = 0; i < 24; i++) {
    const plain = Array.from({ length: 4 + int(random, 20) }, () => String.fromCharCode(97 + int(random, 26))).join('');
    strings.push(`"${[...plain].map((c) => `\\${(c.charCodeAt(0) ^ key).toString()}`).join('')}"`);
  }
  const head = [
    `local K={${strings.join(',')}}`,
    `local function D(s) local o={} for i=1,#s do o[i]=string.char(bit32.bxor(string.byte(s,i),${key})) end return table.concat(o) end`,
    'local A,B,C=0,{},1',
  ];
  const body: string[] = [];
  let length = head.join(';').length;
  for (let n = 0; length < bytes - 40; n++) {
    const a = int(random, 1000);
    const b = 1 + int(random, 97);
    const s = 1 + int(random, strings.length);
    const statement = pick(random, [
      `A=(A+${a}*C)%${1_000_003}`,
      `B[${(n % 50) + 1}]=#D(K[${s}])+${a}`,
      `if A%${b}==0 then A=A+#D(K[${s}]) else C=(C*${b})%97+1 end`,
      `for i=1,${1 + (a % 4)} do A=(A+(B[i] or ${b}))%${1_000_003} end`,
      `C=bit32.band(A+${a},255)+1`,
      ...(options.long ? [`A=A+#[==[${'x]]'.repeat(1 + (a % 3))}]==]--[[${a}]]`, `--[=[ ${a} ]] ]=]\nC=C+1`] : []),
    ]);
    body.push(statement);
    length += statement.length + 1;
  }
  return `${[...head, ...body].join(';')};return A*1000+C`;
}

/**
 * A readable script of about `lines` lines: comments, indentation, long strings, functions; returns a checksum. With
 * `placeholder: true` it names its watermark placeholder in a string, as the spec's publishers do.
 */
export function readableScript(seed: number, lines: number, options: { placeholder?: boolean } = {}): string {
  const random = seededRandom(seed);
  const out = [
    ...(options.placeholder ? ['local Mark = "WM_XXXXXXXXXXXXXXXX"'] : []),
    '-- Settings for the farm',
    'local Settings = {',
    '    speed = 16, -- walk speed',
    '    name = "Farmer",',
    '}',
    'local banner = [[',
    'Welcome to the farm!',
    ']]',
    '--[==[ a long comment',
    'with ]] inside ]==]',
    'local total = #banner',
  ];
  for (let n = 0; out.length < lines; n++) {
    const a = int(random, 100);
    // Each block in its own do … end: Lua allows a function 200 locals.
    const block = pick(random, [
      [
        `local function step${n}(x, y)`,
        `    local z = x * ${a} + y`,
        '    if z > 1000 then',
        '        z = z % 1000',
        '    end',
        '    return z',
        'end',
        `total = step${n}(total, ${a})`,
      ],
      [`for i = 1, ${1 + (a % 5)} do`, `    total = (total + i * Settings.speed) % 100003 -- step ${n}`, 'end'],
      [`local label${n} = Settings.name .. ": " .. tostring(total)`, `total = total + #label${n}`],
      [`local t${n} = { ${a}, ${a + 1}, [==[x]==] }`, `total = total + t${n}[1] + #t${n}[3]`],
    ]);
    out.push('do', ...block.map((line) => `    ${line}`), 'end');
  }
  out.push(options.placeholder ? 'return total + #Mark' : 'return total');
  return out.join('\n');
}
