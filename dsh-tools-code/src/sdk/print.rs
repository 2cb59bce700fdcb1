//! Printing swc AST declarations with `swc_ecma_codegen`.
//!
//! The code generator writes through [`SdkWriter`], a text writer with the line breaks of swc's
//! `JsWriter` and the compact layout of the SDK (`docs/CONTRACTS.md`, "The SDK"): no
//! indentation (braces carry the nesting; indentation cost about 7% of a real SDK's tokens), a
//! doc comment on a line of its own before its member, and `{}` for an empty body.
//!
//! Placeholders: an identifier `#<n>` (never a valid name, so never otherwise printed) is not
//! written; the writer records its byte offset and `n` as a [`Mark`], and whoever assembles the
//! text later writes the alias name that `n` stands for there (see [`super::fragment`]).

use std::io;

use swc_common::comments::SingleThreadedComments;
use swc_common::sync::Lrc;
use swc_common::{BytePos, SourceMap, Span};
use swc_ecma_ast::ModuleItem;
use swc_ecma_codegen::text_writer::WriteJs;
use swc_ecma_codegen::{Config, Emitter, Node};

/// Where placeholder `alias` stands in a printed text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mark {
    /// The byte offset.
    pub(crate) at: usize,
    /// The placeholder's number (`#<alias>`).
    pub(crate) alias: u32,
}

/// Prints each declaration with the code generator; declarations are separated by a blank line.
pub(crate) fn print_items(items: &[ModuleItem], comments: &SingleThreadedComments) -> String {
    let cm: Lrc<SourceMap> = Lrc::default();
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let mut marks = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            buf.extend_from_slice(b"\n\n");
        }
        emit(&cm, item, comments, &mut buf, &mut marks);
    }
    into_string(buf)
}

/// Prints one declaration (or any other node, such as an interface member), with the
/// [`Mark`]s of its placeholders.
pub(crate) fn print_item<N: Node>(
    cm: &Lrc<SourceMap>,
    item: &N,
    comments: &SingleThreadedComments,
) -> (String, Vec<Mark>) {
    let mut buf = Vec::with_capacity(256);
    let mut marks = Vec::new();
    emit(cm, item, comments, &mut buf, &mut marks);
    (into_string(buf), marks)
}

fn emit<N: Node>(
    cm: &Lrc<SourceMap>,
    item: &N,
    comments: &SingleThreadedComments,
    buf: &mut Vec<u8>,
    marks: &mut Vec<Mark>,
) {
    let start = buf.len();
    let mut emitter = Emitter {
        cfg: Config::default(),
        cm: cm.clone(),
        comments: Some(comments),
        wr: SdkWriter {
            out: buf,
            marks,
            line_start: true,
            pending_line: false,
            after_open_brace: false,
        },
    };
    // Writing to a Vec cannot fail; the code generator only fails on AST nodes of unknown
    // kinds, which this module never builds.
    if item.emit_with(&mut emitter).is_ok() {
        let _ = emitter.wr.flush_line();
    }
    while buf.len() > start && buf.last() == Some(&b'\n') {
        buf.pop();
    }
}

fn into_string(buf: Vec<u8>) -> String {
    String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// See the module documentation.
struct SdkWriter<'b> {
    out: &'b mut Vec<u8>,
    marks: &'b mut Vec<Mark>,
    /// Nothing has been written on the current line yet.
    line_start: bool,
    /// A line break is owed (written before the next output, dropped before a `}` that
    /// directly follows a `{`).
    pending_line: bool,
    /// The last output was `{`.
    after_open_brace: bool,
}

type Result = io::Result<()>;

impl SdkWriter<'_> {
    /// `JsWriter::write` without indentation.
    fn write(&mut self, data: &str) -> Result {
        if !data.is_empty() {
            self.line_start = false;
            self.out.extend_from_slice(data.as_bytes());
        }
        Ok(())
    }

    fn flush_line(&mut self) -> Result {
        if self.pending_line {
            self.pending_line = false;
            if !self.line_start {
                self.out.push(b'\n');
                self.line_start = true;
            }
        }
        Ok(())
    }

    /// Before any output.
    fn before(&mut self) -> Result {
        self.after_open_brace = false;
        self.flush_line()
    }
}

impl WriteJs for SdkWriter<'_> {
    fn increase_indent(&mut self) -> Result {
        Ok(())
    }

    fn decrease_indent(&mut self) -> Result {
        Ok(())
    }

    fn write_semi(&mut self, _span: Option<Span>) -> Result {
        self.before()?;
        self.write(";")
    }

    fn write_space(&mut self) -> Result {
        self.before()?;
        self.write(" ")
    }

    fn write_keyword(&mut self, _span: Option<Span>, s: &'static str) -> Result {
        self.before()?;
        self.write(s)
    }

    fn write_operator(&mut self, _span: Option<Span>, s: &str) -> Result {
        self.before()?;
        self.write(s)
    }

    fn write_param(&mut self, s: &str) -> Result {
        self.before()?;
        self.write(s)
    }

    fn write_property(&mut self, s: &str) -> Result {
        self.before()?;
        self.write(s)
    }

    fn write_line(&mut self) -> Result {
        self.pending_line = true;
        Ok(())
    }

    fn write_lit(&mut self, _span: Span, s: &str) -> Result {
        self.before()?;
        self.write(s)
    }

    fn write_comment(&mut self, s: &str) -> Result {
        self.before()?;
        self.write(s)
    }

    fn write_str_lit(&mut self, _span: Span, s: &str) -> Result {
        self.before()?;
        self.write(s)
    }

    fn write_str(&mut self, s: &str) -> Result {
        self.before()?;
        self.write(s)
    }

    fn write_symbol(&mut self, _span: Span, s: &str) -> Result {
        self.before()?;
        if let Some(alias) = s.strip_prefix('#').and_then(|n| n.parse().ok()) {
            self.line_start = false;
            self.marks.push(Mark {
                at: self.out.len(),
                alias,
            });
            return Ok(());
        }
        self.write(s)
    }

    fn write_punct(&mut self, _span: Option<Span>, s: &'static str, _commit: bool) -> Result {
        if s == "}" && self.after_open_brace && self.pending_line {
            self.pending_line = false;
        }
        self.before()?;
        self.write(s)?;
        self.after_open_brace = s == "{";
        Ok(())
    }

    fn care_about_srcmap(&self) -> bool {
        false
    }

    fn add_srcmap(&mut self, _pos: BytePos) -> Result {
        Ok(())
    }

    fn commit_pending_semi(&mut self) -> Result {
        Ok(())
    }
}
