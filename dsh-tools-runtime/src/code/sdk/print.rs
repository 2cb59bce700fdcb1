//! Printing swc AST declarations with `swc_ecma_codegen`.
//!
//! The code generator writes through [`SdkWriter`], a thin wrapper over swc's `JsWriter`
//! (2-space indentation) with two layout choices of the SDK: a doc comment ends its line (the
//! member follows on the next line, as in the reference text) and an empty body prints `{}`.

use std::io;

use swc_common::comments::SingleThreadedComments;
use swc_common::sync::Lrc;
use swc_common::{BytePos, SourceMap, Span};
use swc_ecma_ast::ModuleItem;
use swc_ecma_codegen::text_writer::{JsWriter, WriteJs};
use swc_ecma_codegen::{Config, Emitter, Node};

/// Prints each declaration with the code generator; declarations are separated by a blank line.
pub(crate) fn print_items(items: &[ModuleItem], comments: &SingleThreadedComments) -> String {
    let cm: Lrc<SourceMap> = Lrc::default();
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            buf.extend_from_slice(b"\n\n");
        }
        let start = buf.len();
        let mut inner = JsWriter::new(cm.clone(), "\n", &mut buf, None);
        inner.set_indent_str("  ");
        let mut emitter = Emitter {
            cfg: Config::default(),
            cm: cm.clone(),
            comments: Some(comments),
            wr: SdkWriter {
                inner,
                pending_line: false,
                after_doc: false,
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
    String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// See the module documentation.
struct SdkWriter<W: WriteJs> {
    inner: W,
    /// A line break is owed (written before the next output, dropped before a `}` that
    /// directly follows a `{`).
    pending_line: bool,
    /// The last output closed a comment: the next space becomes a line break.
    after_doc: bool,
    /// The last output was `{`.
    after_open_brace: bool,
}

type Result = io::Result<()>;

impl<W: WriteJs> SdkWriter<W> {
    fn flush_line(&mut self) -> Result {
        if self.pending_line {
            self.pending_line = false;
            self.inner.write_line()?;
        }
        Ok(())
    }

    /// Before any output other than a comment end.
    fn before(&mut self) -> Result {
        self.after_doc = false;
        self.after_open_brace = false;
        self.flush_line()
    }
}

impl<W: WriteJs> WriteJs for SdkWriter<W> {
    fn increase_indent(&mut self) -> Result {
        self.inner.increase_indent()
    }

    fn decrease_indent(&mut self) -> Result {
        self.inner.decrease_indent()
    }

    fn write_semi(&mut self, span: Option<Span>) -> Result {
        self.before()?;
        self.inner.write_semi(span)
    }

    fn write_space(&mut self) -> Result {
        if self.after_doc {
            self.after_doc = false;
            self.pending_line = true;
            return Ok(());
        }
        self.before()?;
        self.inner.write_space()
    }

    fn write_keyword(&mut self, span: Option<Span>, s: &'static str) -> Result {
        self.before()?;
        self.inner.write_keyword(span, s)
    }

    fn write_operator(&mut self, span: Option<Span>, s: &str) -> Result {
        self.before()?;
        self.inner.write_operator(span, s)
    }

    fn write_param(&mut self, s: &str) -> Result {
        self.before()?;
        self.inner.write_param(s)
    }

    fn write_property(&mut self, s: &str) -> Result {
        self.before()?;
        self.inner.write_property(s)
    }

    fn write_line(&mut self) -> Result {
        self.after_doc = false;
        self.pending_line = true;
        Ok(())
    }

    fn write_lit(&mut self, span: Span, s: &str) -> Result {
        self.before()?;
        self.inner.write_lit(span, s)
    }

    fn write_comment(&mut self, s: &str) -> Result {
        self.before()?;
        self.inner.write_comment(s)?;
        self.after_doc = s == "*/";
        Ok(())
    }

    fn write_str_lit(&mut self, span: Span, s: &str) -> Result {
        self.before()?;
        self.inner.write_str_lit(span, s)
    }

    fn write_str(&mut self, s: &str) -> Result {
        self.before()?;
        self.inner.write_str(s)
    }

    fn write_symbol(&mut self, span: Span, s: &str) -> Result {
        self.before()?;
        self.inner.write_symbol(span, s)
    }

    fn write_punct(&mut self, span: Option<Span>, s: &'static str, commit: bool) -> Result {
        if s == "}" && self.after_open_brace && self.pending_line {
            self.pending_line = false;
        }
        self.before()?;
        self.inner.write_punct(span, s, commit)?;
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
        self.inner.commit_pending_semi()
    }
}
