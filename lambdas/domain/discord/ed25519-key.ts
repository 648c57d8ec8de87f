/**
 * Whether 32 bytes are an Ed25519 public key a signer can hold (DESIGN.md, "Limits that protect every tenant",
 * "Discord link"): the canonical encoding (RFC 8032, 5.1.3) of a point of the prime-order subgroup other than the
 * identity. Node's verify (OpenSSL) accepts any point: under a point of small order (`01` + 62 zeros, the identity,
 * among them) one constant signature verifies every message, so such a key would be a backdoor, not a link.
 * Plain BigInt arithmetic: it runs once per key linked and once per key a container first verifies under.
 */

const P = 2n ** 255n - 19n;
/** The order of the prime-order subgroup (RFC 8032, 5.1: L). */
const L = 2n ** 252n + 27742317777372353535851937790883648493n;
/** The curve group's order is 8 L: a point of order dividing 8 is of "small order". */
const COFACTOR = 8n;

const mod = (a: bigint): bigint => {
  const r = a % P;
  return r < 0n ? r + P : r;
};

function power(base: bigint, exponent: bigint): bigint {
  let result = 1n;
  let b = mod(base);
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % P;
    b = (b * b) % P;
  }
  return result;
}

const D = mod(-121665n * power(121666n, P - 2n));
const D2 = mod(2n * D);
const SQRT_MINUS_ONE = power(2n, (P - 1n) / 4n);

/** A point in extended coordinates: x = X/Z, y = Y/Z, x y = T/Z. */
interface Point {
  X: bigint;
  Y: bigint;
  Z: bigint;
  T: bigint;
}

const IDENTITY: Point = { X: 0n, Y: 1n, Z: 1n, T: 0n };

/** RFC 8032, 5.1.4: complete on this curve, so it doubles too. */
function add(p: Point, q: Point): Point {
  const a = mod((p.Y - p.X) * (q.Y - q.X));
  const b = mod((p.Y + p.X) * (q.Y + q.X));
  const c = mod(p.T * D2 * q.T);
  const d = mod(2n * p.Z * q.Z);
  const e = b - a;
  const f = d - c;
  const g = d + c;
  const h = b + a;
  return { X: mod(e * f), Y: mod(g * h), Z: mod(f * g), T: mod(e * h) };
}

function multiply(point: Point, scalar: bigint): Point {
  let result = IDENTITY;
  let addend = point;
  for (let k = scalar; k > 0n; k >>= 1n) {
    if (k & 1n) result = add(result, addend);
    addend = add(addend, addend);
  }
  return result;
}

const isIdentity = (point: Point): boolean => mod(point.X) === 0n && mod(point.Y - point.Z) === 0n;

/** RFC 8032, 5.1.3, with the canonical y the RFC requires (y < p); undefined for 32 bytes that encode no point. */
function decodePoint(bytes: Buffer): Point | undefined {
  const encoded = BigInt(`0x${Buffer.from(bytes).reverse().toString('hex')}`);
  const y = encoded & ((1n << 255n) - 1n);
  const xSign = encoded >> 255n;
  if (y >= P) return undefined;
  const u = mod(y * y - 1n);
  const v = mod(D * y * y + 1n);
  let x = mod(u * power(v, 3n) * power(u * power(v, 7n), (P - 5n) / 8n));
  const vxx = mod(v * x * x);
  if (vxx === mod(-u)) x = mod(x * SQRT_MINUS_ONE);
  else if (vxx !== u) return undefined;
  // x = 0 has one encoding; its other sign bit is the non-canonical spelling of (0, ±1).
  if (x === 0n && xSign === 1n) return undefined;
  if ((x & 1n) !== xSign) x = P - x;
  return { X: x, Y: y, Z: 1n, T: mod(x * y) };
}

/** Why these 32 bytes are no Ed25519 public key a signer holds, in words after "public_key", or undefined. */
export function ed25519PublicKeyProblem(bytes: Buffer): string | undefined {
  if (bytes.length !== 32) return 'must be 32 bytes';
  const point = decodePoint(bytes);
  if (!point) return 'is not the canonical encoding of a point of Ed25519';
  if (isIdentity(multiply(point, COFACTOR))) return 'is a point of small order, under which a constant signature verifies every message';
  if (!isIdentity(multiply(point, L))) return 'is not in the prime-order subgroup that every Ed25519 key is in';
  return undefined;
}
