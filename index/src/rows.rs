//! The one order of embedded rows: chunk by chunk, each chunk's own row,
//! then one row per subchunk. The builder embeds texts in this order, build
//! parts store their vectors in it, and [`crate::builder::VersionBuilder`]
//! splits it into `vectors.f32` and `subchunks.f32`. Nothing else needs to
//! know it.

use crate::vectors;

/// One place in the order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Row<'a, C, S> {
    /// A chunk's own row.
    Chunk(&'a C),
    /// One of that chunk's subchunks.
    Subchunk(&'a S),
}

/// The rows of `chunks`, in order: each chunk, then its `subchunks(chunk)`.
pub fn order<'a, C: 'a, S: 'a>(
    chunks: impl IntoIterator<Item = &'a C>,
    subchunks: impl Fn(&'a C) -> &'a [S],
) -> impl Iterator<Item = Row<'a, C, S>> {
    chunks.into_iter().flat_map(move |c| {
        std::iter::once(Row::Chunk(c)).chain(subchunks(c).iter().map(Row::Subchunk))
    })
}

/// How many rows a chunk with `subchunks` subchunks takes.
pub const fn rows_of_chunk(subchunks: usize) -> usize {
    1 + subchunks
}

/// Vectors of `dim` floats, in row order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rows {
    dim: usize,
    values: Vec<f32>,
}

/// Bytes that are not a whole number of rows.
#[derive(Debug, thiserror::Error)]
#[error("{bytes} bytes is not {rows} rows of {dim} little-endian f32")]
pub struct RowsError {
    /// Bytes found.
    pub bytes: usize,
    /// Rows expected.
    pub rows: usize,
    /// Floats per row.
    pub dim: usize,
}

impl Rows {
    /// No rows yet, each to be `dim` floats.
    pub fn new(dim: usize) -> Self {
        Self {
            dim,
            values: Vec::new(),
        }
    }

    /// Appends the next row; a vector of the wrong length is padded or cut
    /// to `dim` (the embedder only returns `dim` floats).
    pub fn push(&mut self, row: &[f32]) {
        let n = row.len().min(self.dim);
        self.values.extend_from_slice(&row[..n]);
        self.values.resize(self.values.len() + self.dim - n, 0.0);
    }

    /// Floats per row.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.values.len().checked_div(self.dim).unwrap_or(0)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The rows, in order.
    pub fn iter(&self) -> impl Iterator<Item = &[f32]> {
        self.values.chunks_exact(self.dim.max(1))
    }

    /// The rows as stored: little-endian f32.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.values.len() * 4);
        vectors::encode_into(&mut out, &self.values);
        out
    }

    /// Reads `rows` rows of `dim` floats back from [`Rows::to_le_bytes`].
    pub fn from_le_bytes(bytes: &[u8], rows: usize, dim: usize) -> Result<Self, RowsError> {
        if bytes.len() != rows * dim * 4 {
            return Err(RowsError {
                bytes: bytes.len(),
                rows,
                dim,
            });
        }
        Ok(Self {
            dim,
            values: vectors::decode(bytes),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_chunk_comes_before_its_subchunks() {
        let chunks = [("a", vec!["a1", "a2"]), ("b", vec![]), ("c", vec!["c1"])];
        let names: Vec<&str> = order(&chunks, |c| &c.1)
            .map(|r| match r {
                Row::Chunk(c) => c.0,
                Row::Subchunk(s) => s,
            })
            .collect();
        assert_eq!(names, ["a", "a1", "a2", "b", "c", "c1"]);
        let counted: usize = chunks.iter().map(|c| rows_of_chunk(c.1.len())).sum();
        assert_eq!(counted, names.len());
    }

    #[test]
    fn rows_round_trip_through_bytes() {
        let mut rows = Rows::new(3);
        rows.push(&[1.0, -2.5, 3.25]);
        rows.push(&[0.5]);
        assert_eq!(rows.len(), 2);
        let back = Rows::from_le_bytes(&rows.to_le_bytes(), 2, 3).expect("whole rows");
        assert_eq!(back, rows);
        assert_eq!(back.iter().nth(1), Some(&[0.5, 0.0, 0.0][..]));
        assert!(Rows::from_le_bytes(&rows.to_le_bytes(), 3, 3).is_err());
    }
}
