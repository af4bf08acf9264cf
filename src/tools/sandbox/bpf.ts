/**
 * A small classic-BPF assembler for seccomp filters: the few instructions a syscall filter needs
 * (load a 32-bit word of `struct seccomp_data`, compare and jump, return an action), labels for
 * jump targets, and the encoding the kernel expects (`struct sock_filter`, host byte order).
 * Written here so the filter needs no native library and no downloaded binary.
 */
import { endianness } from "node:os";

// Instruction classes and modes of classic BPF (linux/bpf_common.h).
const BPF_LD_W_ABS = 0x00 | 0x00 | 0x20;
const BPF_JMP = 0x05;
const BPF_JA = 0x00;
const BPF_JEQ = 0x10;
const BPF_JGE = 0x30;
const BPF_JSET = 0x40;
const BPF_K = 0x00;
const BPF_RET_K = 0x06 | BPF_K;

/** The kernel refuses programs longer than this (BPF_MAXINSNS). */
export const MAX_INSTRUCTIONS = 4096;

export type Condition = "eq" | "ge" | "set";
const CONDITION_CODES: Record<Condition, number> = { eq: BPF_JEQ, ge: BPF_JGE, set: BPF_JSET };

type Target = string | null;
type Item =
  | { kind: "ld"; offset: number }
  | { kind: "jump"; condition: Condition; k: number; whenTrue: Target; whenFalse: Target }
  | { kind: "goto"; to: string }
  | { kind: "ret"; k: number };

/**
 * Builds a program in order. A jump names the label of its target or `null` for the next
 * instruction; a conditional jump can only reach 255 instructions ahead (an 8-bit offset), and
 * `assemble` refuses a program that needs more rather than emitting a wrong one.
 */
export class BpfProgram {
  private readonly items: Item[] = [];
  private readonly labels = new Map<string, number>();

  /** Marks the next instruction as `name`. */
  label(name: string): this {
    if (this.labels.has(name)) throw new Error(`BPF label ${name} defined twice`);
    this.labels.set(name, this.items.length);
    return this;
  }

  /** A = the 32-bit word at `offset` of the seccomp data. */
  load(offset: number): this {
    this.items.push({ kind: "ld", offset });
    return this;
  }

  /** If (A op k) go to `whenTrue`, else to `whenFalse` (null: the next instruction). */
  jump(condition: Condition, k: number, whenTrue: Target, whenFalse: Target = null): this {
    this.items.push({ kind: "jump", condition, k: k >>> 0, whenTrue, whenFalse });
    return this;
  }

  /** Unconditional jump (32-bit offset). */
  goto(to: string): this {
    this.items.push({ kind: "goto", to });
    return this;
  }

  /** Returns the seccomp action `k`. */
  ret(k: number): this {
    this.items.push({ kind: "ret", k: k >>> 0 });
    return this;
  }

  get length(): number {
    return this.items.length;
  }

  /** The program as `struct sock_filter[]` bytes, ready for bwrap's `--seccomp FD`. */
  assemble(): Buffer {
    if (this.items.length === 0 || this.items.length > MAX_INSTRUCTIONS)
      throw new Error(`a BPF program has 1 to ${MAX_INSTRUCTIONS} instructions; this one has ${this.items.length}`);
    const last = this.items[this.items.length - 1]!;
    if (last.kind !== "ret" && last.kind !== "goto") throw new Error("a BPF program must end with a return or a jump");
    const out = Buffer.alloc(this.items.length * 8);
    const little = endianness() === "LE";
    const offsetTo = (at: number, target: Target, max: number): number => {
      if (target === null) return 0;
      const index = this.labels.get(target);
      if (index === undefined) throw new Error(`BPF label ${target} is not defined`);
      const offset = index - at - 1;
      if (offset < 0) throw new Error(`BPF jump to ${target} goes backwards (classic BPF only jumps forward)`);
      if (offset > max) throw new Error(`BPF jump to ${target} is ${offset} instructions ahead, more than ${max}`);
      return offset;
    };
    this.items.forEach((item, at) => {
      let code: number;
      let jt = 0;
      let jf = 0;
      let k: number;
      switch (item.kind) {
        case "ld":
          [code, k] = [BPF_LD_W_ABS, item.offset];
          break;
        case "jump":
          code = BPF_JMP | CONDITION_CODES[item.condition] | BPF_K;
          jt = offsetTo(at, item.whenTrue, 255);
          jf = offsetTo(at, item.whenFalse, 255);
          k = item.k;
          break;
        case "goto":
          [code, k] = [BPF_JMP | BPF_JA, offsetTo(at, item.to, 0xffffffff)];
          break;
        case "ret":
          [code, k] = [BPF_RET_K, item.k];
          break;
      }
      const base = at * 8;
      if (little) {
        out.writeUInt16LE(code, base);
        out.writeUInt32LE(k, base + 4);
      } else {
        out.writeUInt16BE(code, base);
        out.writeUInt32BE(k, base + 4);
      }
      out.writeUInt8(jt, base + 2);
      out.writeUInt8(jf, base + 3);
    });
    return out;
  }
}

/** A tiny interpreter of the programs `BpfProgram` emits, for tests: runs `program` on `data`. */
export function runBpf(program: Buffer, data: Buffer): number {
  const little = endianness() === "LE";
  const word = (buf: Buffer, at: number) => (little ? buf.readUInt32LE(at) : buf.readUInt32BE(at));
  let a = 0;
  for (let pc = 0; pc < program.length / 8; pc++) {
    const base = pc * 8;
    const code = little ? program.readUInt16LE(base) : program.readUInt16BE(base);
    const [jt, jf, k] = [program.readUInt8(base + 2), program.readUInt8(base + 3), word(program, base + 4)];
    if (code === BPF_LD_W_ABS) a = word(data, k);
    else if (code === BPF_RET_K) return k;
    else if (code === (BPF_JMP | BPF_JA)) pc += k;
    else if ((code & 0x07) === BPF_JMP) {
      const op = code & 0xf0;
      const taken = op === BPF_JEQ ? a === k : op === BPF_JGE ? a >= k : op === BPF_JSET ? (a & k) !== 0 : null;
      if (taken === null) throw new Error(`unknown BPF jump 0x${code.toString(16)}`);
      pc += taken ? jt : jf;
    } else throw new Error(`unknown BPF instruction 0x${code.toString(16)}`);
  }
  throw new Error("the BPF program ran off its end");
}
