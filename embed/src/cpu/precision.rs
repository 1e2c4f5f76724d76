//! Which arithmetic the CPU pass multiplies in: the fastest the CPU has
//! (AMX tiles, then AVX-512 BF16, then f32), unless asked otherwise.

use super::{amx, bf16};

/// The arithmetic of the products by the weights of texts longer than a query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// f32 throughout (gemm's kernels).
    F32,
    /// bfloat16 products summed in f32, where the CPU has AVX-512 BF16.
    Bf16,
    /// bfloat16 products summed in f32 on AMX tiles, where the CPU has them
    /// and Linux grants them.
    Amx,
}

impl Precision {
    /// The fastest this CPU has (AMX, then AVX-512 BF16, then f32), unless
    /// `CAIRN_CPU_PRECISION` asks for `f32` (vectors that match candle's to
    /// 0.999999 rather than 0.99996), `bf16` (AVX-512 BF16, not AMX) or
    /// `amx`; any other value, or one this CPU cannot run, is refused.
    pub fn best() -> Result<Self, crate::error::EmbedError> {
        Self::chosen().map(|(p, _)| p)
    }

    /// [`Precision::best`], and why it is the one (what `cairn doctor` says).
    pub fn chosen() -> Result<(Self, &'static str), crate::error::EmbedError> {
        let asked = std::env::var("CAIRN_CPU_PRECISION").unwrap_or_default();
        Self::chosen_for(asked.trim())
    }

    /// What `CAIRN_CPU_PRECISION=asked` chooses ("" when it is not set).
    fn chosen_for(asked: &str) -> Result<(Self, &'static str), crate::error::EmbedError> {
        let refused = |why: String| Err(crate::error::EmbedError::Precision(why));
        let wanted = match asked {
            "" => None,
            "f32" => Some(Self::F32),
            "bf16" => Some(Self::Bf16),
            "amx" => Some(Self::Amx),
            other => {
                return refused(format!(
                    "CAIRN_CPU_PRECISION={other:?} is not one of f32, bf16, amx (or unset, for the fastest this CPU has)"
                ));
            }
        };
        match wanted {
            Some(p) if !p.available() => refused(format!(
                "CAIRN_CPU_PRECISION={} asks for what this CPU lacks: {}",
                p.name(),
                p.needs()
            )),
            Some(Self::F32) => Ok((Self::F32, "CAIRN_CPU_PRECISION=f32 asks for it")),
            Some(Self::Bf16) => Ok((Self::Bf16, "CAIRN_CPU_PRECISION=bf16 asks for it")),
            Some(Self::Amx) => Ok((Self::Amx, "CAIRN_CPU_PRECISION=amx asks for it")),
            None if Self::Amx.available() => Ok((
                Self::Amx,
                "the CPU has AMX-BF16 and Linux granted its tiles",
            )),
            None if Self::Bf16.available() => Ok((
                Self::Bf16,
                "the CPU has AVX-512 BF16 but no AMX tiles to use",
            )),
            None => Ok((Self::F32, "the CPU has neither AMX nor AVX-512 BF16")),
        }
    }

    /// Whether this CPU runs it.
    pub fn available(self) -> bool {
        match self {
            Self::F32 => true,
            Self::Bf16 => bf16::available(),
            Self::Amx => amx::available(),
        }
    }

    /// Its name in a forward pass's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::Bf16 => "bf16",
            Self::Amx => "amx",
        }
    }

    /// What the CPU it runs on must have, for a message that it lacks it.
    pub(super) fn needs(self) -> &'static str {
        match self {
            Self::F32 => "nothing",
            Self::Bf16 => "AVX-512 BF16",
            Self::Amx => "AMX-BF16 (and Linux granting its tiles)",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_precision_is_refused_not_ignored() {
        for bad in ["F32", "fp16", "int8", "best"] {
            let e = Precision::chosen_for(bad).expect_err(bad);
            assert!(
                e.to_string().contains("is not one of f32, bf16, amx"),
                "{e}"
            );
        }
        assert_eq!(Precision::chosen_for("f32").expect("f32").0, Precision::F32);
        assert!(Precision::chosen_for("").is_ok());
        // One this CPU lacks is refused, naming what it lacks.
        for p in [Precision::Bf16, Precision::Amx] {
            match (p.available(), Precision::chosen_for(p.name())) {
                (true, Ok((got, _))) => assert_eq!(got, p),
                (false, Err(e)) => assert!(e.to_string().contains(p.needs()), "{e}"),
                (_, other) => panic!("{}: {other:?}", p.name()),
            }
        }
    }
}
