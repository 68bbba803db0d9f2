"""A protobuf wire-format reader for the tests' checks of stored messages, small enough to read
in full: one message's fields, nothing decoded beyond the wire types."""


def protobuf_fields(data):
    """(field number, wire type, value) of one protobuf message: varints as ints,
    length-delimited fields as bytes, fixed-width fields as their raw bytes."""
    i, out = 0, []
    while i < len(data):
        key, i = varint(data, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(data, i)
        elif wire == 2:
            n, i = varint(data, i)
            value, i = data[i:i + n], i + n
        elif wire == 1:
            value, i = data[i:i + 8], i + 8
        elif wire == 5:
            value, i = data[i:i + 4], i + 4
        else:
            raise ValueError(f'wire type {wire}')
        out.append((field, wire, value))
    return out


def varint(data, i):
    shift = value = 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7f) << shift
        shift += 7
        if b < 0x80:
            return value, i
