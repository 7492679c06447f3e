"""The objectives and contrastive losses of a method, one per module or package of this folder: its part (what a
method declares and a step gives it, `sentaug.parts`) and, in a package, its torch module (`module`).

The parts registry imports every module and package here when it is first asked for a part
(`sentaug.parts.registry.BUILT_IN`): a new objective is one file here, `@register`ed as a plugin's is
(docs/extending.md), and nothing else to edit. The package itself and each part's module import no torch (the
workflow imports them all to check a configuration); the torch modules are imported where a part builds one.
"""
