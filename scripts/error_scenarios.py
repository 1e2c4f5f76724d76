"""The failures behind golden/errors.yaml: each scenario calls an indexed
package wrongly, the way users do (bad shapes, missing or unknown parameters,
non-finite likelihoods, unsupported methods, bad formats).
name -> (toolkit as in repositories.yml, lowercased; code run in a fresh interpreter)."""
S = {}
S["emcee-too-few-walkers"] = ("emcee", """
import numpy as np, emcee
s = emcee.EnsembleSampler(6, 4, lambda p: -0.5*np.sum(p**2))
s.run_mcmc(np.random.randn(6, 4), 10)
""")
S["emcee-nan-initial-logprob"] = ("emcee", """
import numpy as np, emcee
s = emcee.EnsembleSampler(12, 3, lambda p: np.nan)
s.run_mcmc(np.random.randn(12, 3), 10)
""")
S["emcee-degenerate-initial-state"] = ("emcee", """
import numpy as np, emcee
s = emcee.EnsembleSampler(12, 3, lambda p: -0.5*np.sum(p**2))
s.run_mcmc(np.ones((12, 3)), 10)
""")
S["emcee-chain-before-run"] = ("emcee", """
import numpy as np, emcee
s = emcee.EnsembleSampler(12, 3, lambda p: -0.5*np.sum(p**2))
s.get_chain()
""")
S["emcee-autocorr-short-chain"] = ("emcee", """
import numpy as np, emcee
s = emcee.EnsembleSampler(12, 3, lambda p: -0.5*np.sum(p**2))
s.run_mcmc(np.random.randn(12, 3), 50)
s.get_autocorr_time()
""")
S["emcee-run-without-initial-state"] = ("emcee", """
import numpy as np, emcee
s = emcee.EnsembleSampler(12, 3, lambda p: -0.5*np.sum(p**2))
s.run_mcmc(None, 10)
""")
S["emcee-initial-state-shape"] = ("emcee", """
import numpy as np, emcee
s = emcee.EnsembleSampler(12, 3, lambda p: -0.5*np.sum(p**2))
s.run_mcmc(np.random.randn(12, 4), 10)
""")
S["emcee-hdf-backend-without-h5py"] = ("emcee", """
import emcee
emcee.backends.HDFBackend("chain.h5")
""")
S["dynesty-unknown-bound"] = ("dynesty", """
import numpy as np, dynesty
dynesty.NestedSampler(lambda x: -0.5*np.sum(x**2), lambda u: u, 2, bound='box')
""")
S["dynesty-unknown-sample"] = ("dynesty", """
import numpy as np, dynesty
dynesty.NestedSampler(lambda x: -0.5*np.sum(x**2), lambda u: u, 2, sample='gibbs')
""")
S["dynesty-resample-weights"] = ("dynesty", """
import numpy as np
from dynesty import utils
utils.resample_equal(np.random.randn(10, 2), np.ones(10))
""")
S["dynesty-nan-loglike"] = ("dynesty", """
import numpy as np, dynesty
s = dynesty.NestedSampler(lambda x: np.nan, lambda u: u, 2, nlive=20)
s.run_nested(maxiter=5)
""")
S["dynesty-prior-outside-cube"] = ("dynesty", """
import numpy as np, dynesty
s = dynesty.NestedSampler(lambda x: -0.5*np.sum(x**2), lambda u: u, 2, nlive=20, periodic=[5])
""")
S["corner-range-mismatch"] = ("corner.py", """
import numpy as np, corner
corner.corner(np.random.randn(1000, 3), range=[(0, 1)])
""")
S["corner-more-dims-than-samples"] = ("corner.py", """
import numpy as np, corner
corner.corner(np.random.randn(3, 50))
""")
S["corner-weights-mismatch"] = ("corner.py", """
import numpy as np, corner
corner.corner(np.random.randn(1000, 3), weights=np.ones(10))
""")
S["corner-no-dynamic-range"] = ("corner.py", """
import numpy as np, corner
x = np.random.randn(1000, 2); x[:, 1] = 1.0
corner.corner(x)
""")
S["corner-truths-mismatch"] = ("corner.py", """
import numpy as np, corner
corner.corner(np.random.randn(1000, 3), truths=[0, 1])
""")
S["mulens-missing-te"] = ("mulensmodel", """
import MulensModel as mm
mm.Model({'t_0': 2450000., 'u_0': 0.1})
""")
S["mulens-unknown-parameter"] = ("mulensmodel", """
import MulensModel as mm
mm.Model({'t_0': 2450000., 'u_0': 0.1, 't_E': 20., 'foo': 3})
""")
S["mulens-negative-te"] = ("mulensmodel", """
import MulensModel as mm
mm.Model({'t_0': 2450000., 'u_0': 0.1, 't_E': -20.})
""")
S["mulens-bad-magnification-method"] = ("mulensmodel", """
import MulensModel as mm
m = mm.Model({'t_0': 2450000., 'u_0': 0.1, 't_E': 20., 'rho': 0.01})
m.set_magnification_methods([2449990., 'no_such_method', 2450010.])
m.get_magnification(2450000.)
""")
S["mulens-data-phot-fmt"] = ("mulensmodel", """
import MulensModel as mm, numpy as np
mm.MulensData(data_list=[np.arange(5.), np.ones(5), np.ones(5)], phot_fmt='fluxes')
""")
S["mulens-binary-missing-q"] = ("mulensmodel", """
import MulensModel as mm
mm.Model({'t_0': 2450000., 'u_0': 0.1, 't_E': 20., 's': 1.1, 'alpha': 30.})
""")
S["emcee-autocorr-function-dims"] = ("emcee", """
import numpy as np, emcee
emcee.autocorr.function_1d(np.ones((5, 2)))
""")
S["dynesty-quantile-range"] = ("dynesty", """
import numpy as np
from dynesty import utils
utils.quantile(np.random.randn(100), [0.5, 1.5])
""")
S["corner-quantile-range"] = ("corner.py", """
import numpy as np, corner
corner.quantile(np.random.randn(100), [0.5, 1.5])
""")
S["pylima-event-no-telescope"] = ("pylima", """
from pyLIMA import event
e = event.Event()
e.check_event()
""")
S["pylima-event-bad-ra"] = ("pylima", """
from pyLIMA import event
e = event.Event(ra=400., dec=10.)
e.check_event()
""")
# printed as a warning, not raised
WARN = {"dynesty-resample-weights"}
# run under IPython, whose tracebacks look like a notebook's
IPY = {"emcee-initial-state-shape", "mulens-negative-te", "corner-no-dynamic-range"}

# Fresh errors for golden/errors-fresh.yaml, written after the explain matcher
# was frozen (session 11) and measured once: a check on the learned file above.
FRESH = {}
FRESH["emcee-gaussian-move-dims"] = ("emcee", """
import numpy as np, emcee
s = emcee.EnsembleSampler(10, 2, lambda p: -0.5*np.sum(p**2), moves=emcee.moves.GaussianMove(np.eye(3)))
s.run_mcmc(np.random.randn(10, 2), 5)
""")
FRESH["emcee-gaussian-move-factor"] = ("emcee", """
import emcee
emcee.moves.GaussianMove(0.5, factor=0.5)
""")
FRESH["dynesty-cornerbound-no-iteration"] = ("dynesty", """
import numpy as np, dynesty
from dynesty import plotting as dyplot
s = dynesty.NestedSampler(lambda x: -0.5*np.sum(x**2), lambda u: 10*u - 5, 2, nlive=30)
s.run_nested(maxiter=200, print_progress=False)
dyplot.cornerbound(s.results)
""")
FRESH["dynesty-traceplot-span"] = ("dynesty", """
import numpy as np, dynesty
from dynesty import plotting as dyplot
s = dynesty.NestedSampler(lambda x: -0.5*np.sum(x**2), lambda u: 10*u - 5, 2, nlive=30)
s.run_nested(maxiter=200, print_progress=False)
dyplot.traceplot(s.results, span=[0.9, 0.9, 0.9])
""")
FRESH["corner-overplot-dims"] = ("corner.py", """
import numpy as np, corner
fig = corner.corner(np.random.randn(500, 2))
corner.overplot_lines(fig, [0, 1, 2])
""")
FRESH["mulens-negative-rho"] = ("mulensmodel", """
import MulensModel as mm
mm.Model({'t_0': 2450000., 'u_0': 0.1, 't_E': 20., 'rho': -0.01})
""")
FRESH["mulens-methods-odd"] = ("mulensmodel", """
import MulensModel as mm
m = mm.Model({'t_0': 2450000., 'u_0': 0.1, 't_E': 20., 'rho': 0.01})
m.set_magnification_methods([2449990., 'finite_source_uniform_Gould94'])
""")
FRESH["pylima-event-bad-dec"] = ("pylima", """
from pyLIMA import event
e = event.Event(ra=10., dec=100.)
e.check_event()
""")
FRESH_IPY = {"mulens-negative-rho"}
