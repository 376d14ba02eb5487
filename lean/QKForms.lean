import QKForms.Basic
import QKForms.EnergyIdentities
import QKForms.RankBalance
import QKForms.PairingBound
import QKForms.GramForm
import QKForms.BalancedSignature
import QKForms.ProfileDefs
import QKForms.Profile
import QKForms.RankOne
import QKForms.ProfileFaces
import QKForms.ProfileFacesConverse
import QKForms.ProportionalLobes
import QKForms.LobeEstimates
import QKForms.Accumulation
import QKForms.GramSpectrum
import QKForms.GramProfile
import QKForms.LiveSignature
import QKForms.RankOneRank
import QKForms.AccumulationEndpoints

/-!
# QKForms

Root module of the `QKForms` library: imports every module listed in `docs/architecture.md` §2.
-/
