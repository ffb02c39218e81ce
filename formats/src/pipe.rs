//! Streaming an export while it is encoded: the encoder runs on a thread of its own and fills
//! 1 MiB buffers, the caller's thread writes each to the output as it fills (the kernel's copy of
//! a file's bytes into the page cache is 15 % of the CPU time of a Perfetto trace of 1 M samples,
//! a third of a Chrome JSON one), and the written buffers go back to the encoder to be filled
//! again, so no buffer is allocated (or faulted in) more than once.
//!
//! The output is the same bytes in the same order as writing through one `BufWriter`.

use std::io::{self, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// The size of a buffer, and how many buffers are in flight at most.
const CHUNK: usize = 1 << 20;
const IN_FLIGHT: usize = 4;

/// A buffer and how much of it is filled.
type Filled = (Box<[u8]>, usize);

/// What the encoder writes into: a [`Write`] that hands full buffers to the writing thread, and
/// lends the free end of its buffer to encoders that write in place ([`Chunks::space`]).
pub struct Chunks {
    buf: Box<[u8]>,
    len: usize,
    full: SyncSender<Filled>,
    empty: Receiver<Box<[u8]>>,
    /// Buffers made so far (up to `IN_FLIGHT + 1`; after that, written ones are reused).
    made: usize,
}

impl Chunks {
    fn send(&mut self) -> io::Result<()> {
        let next = if self.made <= IN_FLIGHT {
            self.made += 1;
            vec![0; CHUNK].into_boxed_slice()
        } else {
            // Every buffer is in flight or waiting to be reused: take one back once written.
            self.empty.recv().map_err(|_| stopped())?
        };
        let full = std::mem::replace(&mut self.buf, next);
        let len = std::mem::take(&mut self.len);
        self.full.send((full, len)).map_err(|_| stopped())
    }

    /// At least `n` (≤ 1 MiB) free bytes at the end of the buffer, for an encoder to write into;
    /// [`Chunks::commit`] then keeps the bytes it wrote. Saves copying each small event.
    #[inline]
    pub fn space(&mut self, n: usize) -> io::Result<&mut [u8]> {
        if CHUNK - self.len < n {
            self.send()?;
        }
        Ok(&mut self.buf[self.len..])
    }

    /// Keeps the first `n` bytes written into [`Chunks::space`].
    #[inline]
    pub fn commit(&mut self, n: usize) {
        self.len += n;
        debug_assert!(self.len <= CHUNK);
    }

    /// Fills the buffer, hands it over, and goes on with the rest.
    #[cold]
    fn write_across(&mut self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            let room = CHUNK - self.len;
            if room == 0 {
                self.send()?;
                continue;
            }
            let n = room.min(data.len());
            self.buf[self.len..self.len + n].copy_from_slice(&data[..n]);
            self.len += n;
            data = &data[n..];
        }
        Ok(())
    }
}

/// The writing thread stopped (its write failed; it reports why).
fn stopped() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the export's output stopped taking bytes")
}

impl Write for Chunks {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.write_all(data)?;
        Ok(data.len())
    }

    #[inline]
    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        // Most writes are a few bytes (a JSON token, a slice event) and fit.
        if data.len() <= CHUNK - self.len {
            self.buf[self.len..self.len + data.len()].copy_from_slice(data);
            self.len += data.len();
            return Ok(());
        }
        self.write_across(data)
    }

    /// Buffers are handed over when full, and the last one when the encoder returns.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Runs `encode` on a thread of its own with a [`Chunks`] to write into, and writes what it
/// writes to `out` on this thread as it comes. Gives `encode`'s result; when writing to `out`
/// fails, that error (the encoder is stopped at its next full buffer). `out` is flushed.
pub fn pipelined<T, E>(out: &mut dyn Write, encode: impl FnOnce(&mut Chunks) -> Result<T, E> + Send) -> Result<T, E>
where
    T: Send,
    E: From<io::Error> + Send,
{
    let (full_tx, full_rx) = sync_channel::<Filled>(IN_FLIGHT);
    let (empty_tx, empty_rx) = sync_channel::<Box<[u8]>>(IN_FLIGHT + 1);
    std::thread::scope(|s| {
        let encoder = std::thread::Builder::new().name("encode".into()).spawn_scoped(s, move || {
            let mut chunks = Chunks { buf: vec![0; CHUNK].into_boxed_slice(), len: 0, full: full_tx, empty: empty_rx, made: 1 };
            let result = encode(&mut chunks);
            if result.is_ok() && chunks.len > 0 {
                let last = (std::mem::take(&mut chunks.buf), chunks.len);
                // A failed send means the writer failed, which it reports.
                let _ = chunks.full.send(last);
            }
            result
        });
        let encoder = match encoder {
            Ok(h) => h,
            Err(e) => return Err(E::from(e)),
        };
        let mut failed: Option<io::Error> = None;
        for (buf, len) in full_rx.iter() {
            if let Err(e) = out.write_all(&buf[..len]) {
                failed = Some(e);
                break; // dropping the receiver stops the encoder
            }
            let _ = empty_tx.send(buf);
        }
        drop(full_rx);
        drop(empty_tx);
        let result = match encoder.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        if let Some(e) = failed {
            return Err(E::from(e));
        }
        let value = result?;
        out.flush()?;
        Ok(value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_arrive_in_order_across_buffers() {
        let data: Vec<u8> = (0..(3 * CHUNK + 12345) as u32).map(|i| (i % 251) as u8).collect();
        let mut out = Vec::new();
        let n = pipelined(&mut out, |w| -> io::Result<usize> {
            for piece in data.chunks(7919) {
                w.write_all(piece)?;
            }
            Ok(data.len())
        })
        .unwrap();
        assert_eq!(n, data.len());
        assert_eq!(out, data);
    }

    #[test]
    fn a_failed_write_stops_the_encoder_and_is_reported() {
        struct Full(usize);
        impl Write for Full {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                if self.0 == 0 {
                    return Err(io::Error::other("disk full"));
                }
                self.0 -= 1;
                Ok(b.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let err = pipelined(&mut Full(2), |w| -> io::Result<()> {
            loop {
                w.write_all(&[0; 4096])?;
            }
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "disk full");
    }
}
