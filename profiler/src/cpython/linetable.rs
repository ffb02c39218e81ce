//! Line numbers from CPython 3.11+'s location table (`co_linetable`, described in CPython's
//! `Objects/locations.md`): a run of entries, each covering a number of code units and moving the
//! current line by a delta.

/// The line of the instruction at `lasti` (in code units from the start of the bytecode), or
/// `None` when the table gives that instruction no location.
pub fn line_at(table: &[u8], first_line: i32, lasti: usize) -> Option<i32> {
    let mut line = first_line;
    let mut addr = 0usize;
    let mut i = 0usize;
    while i < table.len() {
        let head = table[i];
        i += 1;
        if head & 0x80 == 0 {
            // Not at an entry's first byte: the table is not what it should be.
            return None;
        }
        let code = (head >> 3) & 0x0f;
        let length = (head & 0x07) as usize + 1;
        let located = match code {
            15 => false,
            14 => {
                line += svarint(table, &mut i)?;
                varint(table, &mut i)?; // end line delta
                varint(table, &mut i)?; // column + 1
                varint(table, &mut i)?; // end column + 1
                true
            }
            13 => {
                line += svarint(table, &mut i)?;
                true
            }
            10..=12 => {
                line += i32::from(code - 10);
                i += 2;
                true
            }
            _ => {
                i += 1;
                true
            }
        };
        if lasti < addr + length {
            return located.then_some(line);
        }
        addr += length;
    }
    None
}

fn varint(t: &[u8], i: &mut usize) -> Option<u32> {
    let mut value: u32 = 0;
    let mut shift = 0;
    loop {
        let b = *t.get(*i)?;
        *i += 1;
        value |= u32::from(b & 0x3f).checked_shl(shift)?;
        if b & 0x40 == 0 {
            return Some(value);
        }
        shift += 6;
    }
}

fn svarint(t: &[u8], i: &mut usize) -> Option<i32> {
    let v = varint(t, i)?;
    let magnitude = (v >> 1) as i32;
    Some(if v & 1 != 0 { -magnitude } else { magnitude })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_as_documented() {
        // 200 = 0x48, 0x03 in the documented encoding.
        let mut i = 0;
        assert_eq!(varint(&[0x48, 0x03], &mut i), Some(200));
        let mut i = 0;
        assert_eq!(svarint(&[0x05], &mut i), Some(-2));
    }

    #[test]
    fn walks_every_entry_kind() {
        let table = [
            0x80 | (13 << 3) | 1, 0x02, // no column, 2 units, line +1
            0x80 | (11 << 3), 4, 9, // one-line form, 1 unit, line +1
            0x80 | (3 << 3) | 2, 0x11, // short form, 3 units, same line
            0x80 | (15 << 3), // no location, 1 unit
            0x80 | (14 << 3), 0x07, 0x00, 0x01, 0x02, // long form, 1 unit, line -3
        ];
        let lines: Vec<Option<i32>> = (0..9).map(|at| line_at(&table, 10, at)).collect();
        assert_eq!(lines, vec![Some(11), Some(11), Some(12), Some(12), Some(12), Some(12), None, Some(9), None]);
    }

    #[test]
    fn a_broken_table_gives_no_line() {
        assert_eq!(line_at(&[0x01, 0x02], 1, 0), None);
        assert_eq!(line_at(&[0x80 | (13 << 3)], 1, 0), None, "a varint cut short");
    }
}
