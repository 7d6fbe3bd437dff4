"""The out-of-tree test plugins of the step cases (cases/steps/plugins) are importable by the
module name the cases give in `plugins:`. (From the command line: PYTHONPATH=cases/steps/plugins.)"""

import os
import sys

_STEP_PLUGINS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases", "steps", "plugins")
if _STEP_PLUGINS not in sys.path:
    sys.path.insert(0, _STEP_PLUGINS)
