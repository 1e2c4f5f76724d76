//! The code-aware text analyzer used for every searchable text field.
//!
//! Identifiers are indexed whole and in parts: `MulensModel.fit_model` gives
//! `mulensmodel.fit_model`, `mulensmodel`, `mulens`, `model`, `fit_model`,
//! `fit`, `model`. Prose words pass through the English stemmer, so `fitting`
//! finds `fit`. The same analyzer runs on queries, which keeps both sides in step.

use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, Stemmer, TextAnalyzer, Token, TokenStream, Tokenizer,
};

/// Name under which [`code_analyzer`] is registered in every cairn index.
pub const CODE_ANALYZER: &str = "cairn_code";

/// The analyzer: [`CodeTokenizer`], lowercase, drop tokens over 64 bytes, English stemming.
pub fn code_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(CodeTokenizer)
        .filter(RemoveLongFilter::limit(64))
        .filter(LowerCaser)
        .filter(Stemmer::new(Language::English))
        .build()
}

/// Splits text into identifiers and their parts (see the module doc).
#[derive(Clone, Copy, Debug, Default)]
pub struct CodeTokenizer;

/// The tokens of one text, produced eagerly.
pub struct VecTokenStream {
    tokens: Vec<Token>,
    next: usize,
}

impl TokenStream for VecTokenStream {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = VecTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> VecTokenStream {
        VecTokenStream {
            tokens: split_code(text),
            next: 0,
        }
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Tokenizes `text`; composite tokens share the position of their first part.
fn split_code(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut position = 0usize;
    for (start, word) in words(text) {
        emit_word(word, start, &mut position, &mut out);
    }
    out
}

/// Maximal runs of word characters, joined by single dots between word characters.
fn words(text: &str) -> Vec<(usize, &str)> {
    let mut spans = Vec::new();
    let mut start: Option<usize> = None;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (i, &(offset, c)) in chars.iter().enumerate() {
        let joins_dot = c == '.'
            && start.is_some()
            && i > 0
            && is_word_char(chars[i - 1].1)
            && chars.get(i + 1).is_some_and(|&(_, n)| is_word_char(n));
        if is_word_char(c) || joins_dot {
            start.get_or_insert(offset);
        } else if let Some(s) = start.take() {
            spans.push((s, &text[s..offset]));
        }
    }
    if let Some(s) = start {
        spans.push((s, &text[s..]));
    }
    spans
}

fn push(out: &mut Vec<Token>, text: &str, from: usize, position: usize) {
    out.push(Token {
        offset_from: from,
        offset_to: from + text.len(),
        position,
        text: text.to_owned(),
        position_length: 1,
    });
}

/// Emits `word` whole, then each dotted part, `_` piece and camelCase piece.
fn emit_word(word: &str, start: usize, position: &mut usize, out: &mut Vec<Token>) {
    let first = *position;
    let leaves = leaves(word);
    let composite = leaves.len() > 1;
    if composite {
        push(out, word, start, first);
    }
    // Middle levels (dotted parts and `_`-joined pieces) help queries that name them.
    let mut offset = 0;
    for part in word.split('.') {
        let part_start = start + offset;
        offset += part.len() + 1;
        if part != word && leaves_count(part) > 1 {
            push(out, part, part_start, *position);
        }
        let mut piece_offset = 0;
        for piece in part.split('_') {
            let piece_start = part_start + piece_offset;
            piece_offset += piece.len() + 1;
            if piece.is_empty() {
                continue;
            }
            let sub = camel_parts(piece);
            if sub.len() > 1 && piece != part {
                push(out, piece, piece_start, *position);
            }
            for (rel, leaf) in sub {
                push(out, leaf, piece_start + rel, *position);
                *position += 1;
            }
        }
    }
}

fn leaves_count(s: &str) -> usize {
    leaves(s).len()
}

fn leaves(word: &str) -> Vec<&str> {
    word.split(['.', '_'])
        .filter(|p| !p.is_empty())
        .flat_map(|p| camel_parts(p).into_iter().map(|(_, l)| l))
        .collect()
}

/// Splits `getHTTPResponse2` into `get`, `HTTP`, `Response2` (with byte offsets).
fn camel_parts(piece: &str) -> Vec<(usize, &str)> {
    let chars: Vec<(usize, char)> = piece.char_indices().collect();
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let (offset, c) = chars[i];
        let prev = chars[i - 1].1;
        let next_lower = chars.get(i + 1).is_some_and(|&(_, n)| n.is_lowercase());
        let boundary =
            c.is_uppercase() && (prev.is_lowercase() || (prev.is_uppercase() && next_lower));
        if boundary {
            parts.push((start, &piece[start..offset]));
            start = offset;
        }
    }
    parts.push((start, &piece[start..]));
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(s: &str) -> Vec<String> {
        let mut a = code_analyzer();
        let mut stream = a.token_stream(s);
        let mut v = Vec::new();
        while let Some(t) = stream.next() {
            v.push(t.text.clone());
        }
        v
    }

    #[test]
    fn identifiers_whole_and_split() {
        let t = texts("MulensModel.fit_model(t_E)");
        for want in [
            "mulensmodel.fit_model",
            "mulensmodel",
            "mulen",
            "model",
            "fit_model",
            "fit",
            "t_e",
            "t",
            "e",
        ] {
            assert!(t.contains(&want.to_owned()), "{want} missing from {t:?}");
        }
    }

    #[test]
    fn camel_and_acronyms() {
        let t = texts("getHTTPResponse PSPLModel");
        for want in [
            "gethttprespons",
            "get",
            "http",
            "respons",
            "psplmodel",
            "pspl",
            "model",
        ] {
            assert!(t.contains(&want.to_owned()), "{want} missing from {t:?}");
        }
    }

    #[test]
    fn prose_is_stemmed_and_dots_end_sentences() {
        assert_eq!(texts("Fitting models."), vec!["fit", "model"]);
    }

    #[test]
    fn offsets_point_at_source() {
        let s = "a fooBar";
        let mut tok = CodeTokenizer;
        let mut stream = tok.token_stream(s);
        while let Some(t) = stream.next() {
            assert_eq!(
                &s[t.offset_from..t.offset_to].to_lowercase(),
                &t.text.to_lowercase()
            );
        }
    }
}
