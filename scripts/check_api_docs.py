#!/usr/bin/env python3
"""Checks fedstat's API-documentation rules on Doxygen's XML output (docs/api/README.md).

Doxygen itself (WARN_AS_ERROR) already fails on any undocumented public name. This adds the
project's rules, which Doxygen cannot express:
  1. every public header's file documentation has a @memory and a @paper section;
  2. every public function that can fail (it returns fedstat::Status, fedstat::Result<...> or
     fedstat_status) has an @errors section in its own documentation naming at least one status
     code (kInvalidArgument ..., FEDSTAT_INVALID_ARGUMENT ...) or saying "none";
  3. every header passed on the command line was documented at all (Doxygen skips a file with
     no @file block silently, and then its free functions with it).
Usage: check_api_docs.py [--root DIR] <doxygen xml dir> <header> [<header> ...]
  (headers as in INPUT; DIR, default ".", is what STRIP_FROM_PATH made Doxygen's paths relative
  to)
Exits 1 and lists every violation, one per line as file:line: message.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

STATUS_RETURN = re.compile(r"^(\[\[nodiscard\]\]\s*)?(static\s+)?(constexpr\s+)?"
                           r"(fedstat::)?(Status|Result\s*<.*>|fedstat_status)$")
STATUS_NAME = re.compile(r"\bk(Ok|InvalidArgument|OutOfRange|ResourceExhausted|FailedPrecondition|"
                         r"NotFound|AlreadyExists|DataLoss|Unavailable|DeadlineExceeded|"
                         r"PermissionDenied|Aborted|Unimplemented|Internal)\b|\bFEDSTAT_[A-Z_]+\b|"
                         r"^\s*[Nn]one\b")


def text_of(element):
    return "".join(element.itertext()) if element is not None else ""


def sections(element):
    """Titles of the @par sections ("Memory:", ...) in a description element -> their text."""
    found = {}
    if element is None:
        return found
    for sect in element.iter("simplesect"):
        if sect.get("kind") != "par":
            continue
        title = text_of(sect.find("title")).strip().rstrip(":")
        body = " ".join(text_of(p) for p in sect.findall("para"))
        found[title] = found.get(title, "") + " " + body
    return found


def main(argv):
    source_root = "."
    if len(argv) > 2 and argv[1] == "--root":
        source_root, argv = argv[2], argv[:1] + argv[3:]
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    xml_dir, headers = argv[1], [os.path.realpath(h) for h in argv[2:]]

    def resolve(path):
        return os.path.realpath(os.path.join(source_root, path))

    problems = []
    documented_files = set()
    seen_members = set()
    index = ET.parse(os.path.join(xml_dir, "index.xml")).getroot()
    for compound in index.findall("compound"):
        kind = compound.get("kind")
        if kind not in ("file", "class", "struct", "namespace"):
            continue
        root = ET.parse(os.path.join(xml_dir, compound.get("refid") + ".xml")).getroot()
        for cdef in root.findall("compounddef"):
            location = cdef.find("location")
            path = resolve(location.get("file")) if location is not None else "?"
            if kind == "file":
                if path not in headers:
                    continue
                if not (text_of(cdef.find("briefdescription")).strip()
                        or text_of(cdef.find("detaileddescription")).strip()):
                    continue
                documented_files.add(path)
                descr = sections(cdef.find("detaileddescription"))
                descr.update(sections(cdef.find("briefdescription")))
                for needed in ("Memory", "Paper"):
                    if not descr.get(needed, "").strip():
                        problems.append(f"{path}:1: the file documentation has no @{needed.lower()}")
            for member in cdef.iter("memberdef"):
                if member.get("kind") != "function" or member.get("prot") != "public":
                    continue
                mloc = member.find("location")
                mfile = resolve(mloc.get("file"))
                if mfile not in headers:
                    continue
                # A C++ function is listed under its namespace (or class), a C function under
                # its file: check each once.
                if member.get("id") in seen_members:
                    continue
                seen_members.add(member.get("id"))
                rtype = " ".join(text_of(member.find("type")).split())
                if not STATUS_RETURN.match(rtype):
                    continue
                descr = sections(member.find("detaileddescription"))
                errors = descr.get("Errors", "")
                name = text_of(member.find("name"))
                if not errors.strip():
                    problems.append(f"{mfile}:{mloc.get('line')}: {name} returns {rtype} but has "
                                    "no @errors section")
                elif not STATUS_NAME.search(errors.strip()):
                    problems.append(f"{mfile}:{mloc.get('line')}: {name}'s @errors names no status "
                                    "code (kOutOfRange, FEDSTAT_OUT_OF_RANGE, ... or 'none')")
    for header in headers:
        if header.endswith(".h") and header not in documented_files:
            problems.append(f"{header}:1: no @file documentation (Doxygen skips the whole file)")
    for problem in sorted(set(problems)):
        print(problem)
    if problems:
        print(f"check_api_docs: {len(set(problems))} problem(s); the rules are in docs/api/README.md")
        return 1
    print(f"check_api_docs: {len(headers)} headers, every rule holds")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
