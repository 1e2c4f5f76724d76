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
    /// 0.999999 rather than 0.99996) or `bf16` (AVX-512 BF16, not AMX).
    pub fn best() -> Self {
        Self::chosen().0
    }

    /// [`Precision::best`], and why it is the one (what `cairn doctor` says).
    pub fn chosen() -> (Self, &'static str) {
        let asked = std::env::var("CAIRN_CPU_PRECISION").unwrap_or_default();
        match asked.as_str() {
            "f32" => return (Self::F32, "CAIRN_CPU_PRECISION=f32 asks for it"),
            "bf16" if Self::Bf16.available() => {
                return (Self::Bf16, "CAIRN_CPU_PRECISION=bf16 asks for it");
            }
            _ => {}
        }
        if Self::Amx.available() {
            (
                Self::Amx,
                "the CPU has AMX-BF16 and Linux granted its tiles",
            )
        } else if Self::Bf16.available() {
            (
                Self::Bf16,
                "the CPU has AVX-512 BF16 but no AMX tiles to use",
            )
        } else {
            (Self::F32, "the CPU has neither AMX nor AVX-512 BF16")
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
