//! Seeded Gaussian noise, the same stream for `make`'s rows and `version`'s.

/// A seeded normal deviate (Box-Muller over a 64-bit LCG).
pub struct Noise(pub u64);
impl Noise {
    /// The next uniform deviate in (0, 1).
    fn uniform(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 40) as f32 + 0.5) / (1u64 << 24) as f32
    }
    /// The next standard normal deviate.
    pub fn normal(&mut self) -> f32 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
    }
}
