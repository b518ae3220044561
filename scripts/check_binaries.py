#!/usr/bin/env python3
"""Structural checks of native libraries that cannot run here (stdlib only).

Usage: check_binaries.py <file> <format> <arch> <symbol>
  format: macho | pe | elf;  arch: x86_64 | arm64 | aarch64
Checks the file's format and machine, and that <symbol> is exported (Mach-O: an external
defined symbol in LC_SYMTAB, leading underscore added; PE: a name in the export directory;
ELF: a defined dynamic symbol). Exits non-zero with the reason otherwise."""
import struct
import sys

MACHO_CPU = {"x86_64": 0x01000007, "arm64": 0x0100000C}
PE_MACHINE = {"x86_64": 0x8664, "arm64": 0xAA64}
ELF_MACHINE = {"x86_64": 62, "aarch64": 183}


def macho_symbols(d):
    magic, cpu, _sub, _ftype, ncmds, _size, _flags, _res = struct.unpack_from("<IiiIIIII", d, 0)
    if magic != 0xFEEDFACF:
        raise SystemExit(f"not a 64-bit Mach-O (magic {magic:#x})")
    at, names = 32, set()
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", d, at)
        if cmd == 0x2:  # LC_SYMTAB
            symoff, nsyms, stroff, _strsize = struct.unpack_from("<IIII", d, at + 8)
            for i in range(nsyms):
                strx, ntype, nsect, _desc, _value = struct.unpack_from("<IBBHQ", d, symoff + 16 * i)
                if ntype & 0x01 and ntype & 0x0E == 0x0E:  # N_EXT, N_SECT
                    end = d.index(b"\0", stroff + strx)
                    names.add(d[stroff + strx:end].decode())
        at += size
    return cpu, names


def pe_exports(d):
    pe = struct.unpack_from("<I", d, 0x3C)[0]
    if d[pe:pe + 4] != b"PE\0\0":
        raise SystemExit("not a PE file")
    machine, nsect, _t, _p, _n, optsize, _ch = struct.unpack_from("<HHIIIHH", d, pe + 4)
    opt = pe + 24
    if struct.unpack_from("<H", d, opt)[0] != 0x20B:
        raise SystemExit("not PE32+")
    export_rva = struct.unpack_from("<I", d, opt + 112)[0]
    sections = [struct.unpack_from("<8sIIII", d, opt + optsize + 40 * i) for i in range(nsect)]

    def off(rva):
        for _name, vsize, vaddr, rawsize, rawptr in sections:
            if vaddr <= rva < vaddr + max(vsize, rawsize):
                return rawptr + rva - vaddr
        raise SystemExit(f"RVA {rva:#x} outside every section")

    if not export_rva:
        return machine, set()
    e = off(export_rva)
    nnames, names_rva = struct.unpack_from("<I", d, e + 24)[0], struct.unpack_from("<I", d, e + 32)[0]
    names = set()
    for i in range(nnames):
        p = off(struct.unpack_from("<I", d, off(names_rva) + 4 * i)[0])
        names.add(d[p:d.index(b"\0", p)].decode())
    return machine, names


def elf_dynamic(d):
    if d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
        raise SystemExit("not a 64-bit little-endian ELF")
    machine = struct.unpack_from("<H", d, 18)[0]
    shoff, shentsize, shnum = struct.unpack_from("<Q", d, 40)[0], *struct.unpack_from("<HH", d, 58)
    shdrs = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
    names = set()
    for _n, stype, _f, _a, offset, size, link, _i, _al, entsize in shdrs:
        if stype == 11:  # SHT_DYNSYM
            stroff = shdrs[link][4]
            for i in range(size // entsize):
                name, _info, _other, shndx, _v, _s = struct.unpack_from("<IBBHQQ", d, offset + i * entsize)
                if shndx:
                    names.add(d[stroff + name:d.index(b"\0", stroff + name)].decode())
    return machine, names


def main():
    path, fmt, arch, symbol = sys.argv[1:5]
    d = open(path, "rb").read()
    if fmt == "macho":
        cpu, names = macho_symbols(d)
        want, symbol = MACHO_CPU[arch], "_" + symbol
    elif fmt == "pe":
        cpu, names = pe_exports(d)
        want = PE_MACHINE[arch]
    else:
        cpu, names = elf_dynamic(d)
        want = ELF_MACHINE[arch]
    if cpu != want:
        raise SystemExit(f"{path}: machine {cpu:#x}, expected {arch} ({want:#x})")
    found = sorted(n for n in names if n == symbol or (symbol.endswith("*") and n.startswith(symbol[:-1])))
    if not found:
        raise SystemExit(f"{path}: {symbol} is not exported")
    print(f"  {path.rsplit('/', 1)[-1]}: {fmt} {arch}, exports {found[0]}{' (+%d more)' % (len(found) - 1) if len(found) > 1 else ''}")


if __name__ == "__main__":
    main()
