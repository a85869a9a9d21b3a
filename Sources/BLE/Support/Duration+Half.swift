extension Duration {
    /// Half of this duration, rounded down to the attosecond. `Duration / Int` converts its
    /// divisor to a 128-bit integer through generic code and divides with overflow checks: a
    /// connect attempt halves its timeout before its `Connect` goes out.
    var half: Duration { Duration(attoseconds: attoseconds >> 1) }
}
