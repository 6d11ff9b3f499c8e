"""Absurd inertial data is refused at load, naming the link and the bound (a link mass
of 1e308 kg used to load, and the controller then published +-effort-limit clipped
torques on every command; an inertia of 1e308 kg m^2 failed with numpy's "Eigenvalues
did not converge", naming no link); unusual-but-possible values warn (InertiaWarning)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from rnea_ros.core.errors import InertiaError, InertiaWarning
from rnea_ros.core.model.dh import DHLink, from_dh
from rnea_ros.core.model.drives import apply_drive_parameters
from rnea_ros.core.model.mdh import MDHLink, from_mdh
from rnea_ros.core.model.payload import Payload, with_payload
from rnea_ros.core.model.urdf import parse_urdf
from rnea_ros.samples import sample_urdf

TEXT = Path(sample_urdf("two_link_rr")).read_text()


def urdf_with(link: str, mass: str | None = None, ixx: str | None = None,
              com: str | None = None) -> str:
    """two_link_rr with ``link``'s mass, ixx or COM origin replaced."""
    start = TEXT.index(f'<link name="{link}"')
    end = TEXT.index("</link>", start)
    body = TEXT[start:end]
    if mass is not None:
        body = re.sub(r'<mass value="[^"]*"', f'<mass value="{mass}"', body)
    if ixx is not None:
        body = re.sub(r'ixx="[^"]*"', f'ixx="{ixx}"', body)
    if com is not None:
        body = re.sub(r'(<inertial>\s*<origin xyz=")[^"]*"', rf'\g<1>{com}"', body)
    assert body != TEXT[start:end]
    return TEXT[:start] + body + TEXT[end:]


LINK = re.search(r'<link name="([^"]+)">\s*<inertial>', TEXT).group(1)  # the first massive


@pytest.mark.parametrize(("change", "what"), [
    ({"mass": "1e308"}, r"mass 1e\+308 kg exceeds the physical bound 1e\+06 kg"),
    ({"mass": "1e200"}, r"mass 1e\+200 kg exceeds the physical bound 1e\+06 kg"),
    ({"mass": "2e6"}, r"mass 2e\+06 kg exceeds"),
    ({"ixx": "1e308"}, r"largest inertia component 1e\+308 kg m\^2 exceeds the physical bound "
                       r"1e\+06 kg m\^2"),
    ({"com": "1e300 0 0"}, r"largest centre of mass coordinate 1e\+300 m exceeds the "
                            r"physical bound 1000 m"),
])
@pytest.mark.parametrize("mode", ["strict", "warn"])
def test_urdf_absurd_inertial_data_is_refused_naming_the_link_and_bound(change, what,
                                                                        mode) -> None:
    with pytest.raises(InertiaError, match=f"link '{LINK}': {what}"):
        parse_urdf(urdf_with(LINK, **change), inertia_check=mode)


def test_urdf_unusual_but_possible_values_warn_and_load() -> None:
    with pytest.warns(InertiaWarning, match=f"link '{LINK}': mass 5e\\+04 kg is unusually "
                                            "large"):
        model = parse_urdf(urdf_with(LINK, mass="5e4"))
    assert float(model.mass.max()) == 5e4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_urdf(TEXT)  # the sample itself: no warning
    from rnea_ros.core.model.robot_model import INERTIAL_BOUNDS, INERTIAL_USUAL
    assert all(u < b for u, b in zip(INERTIAL_USUAL, INERTIAL_BOUNDS, strict=True))


def test_dh_and_mdh_builders_refuse_absurd_masses_and_inertias() -> None:
    with pytest.raises(InertiaError, match=r"mass 1e\+308 kg exceeds the physical bound"):
        from_dh([DHLink(a=0.5, mass=1e308, name="j1", link_name="l1")])
    with pytest.raises(InertiaError, match=r"l1.*inertia component 1e\+308 kg m\^2 exceeds"):
        from_dh([DHLink(a=0.5, mass=1.0, inertia=(1e308, 1e308, 1e308), name="j1",
                        link_name="l1")])
    with pytest.raises(InertiaError, match=r"mass 1e\+200 kg exceeds the physical bound"):
        from_mdh([MDHLink(d=0.5, mass=1e200)])


def test_payload_and_drives_refuse_absurd_inertias() -> None:
    model = parse_urdf(TEXT)
    with pytest.raises(InertiaError, match=r"payload on '.*': mass 1e\+308 kg exceeds"):
        with_payload(model, Payload(link=LINK, mass=1e308))
    joint = model.joint_names[0]
    with pytest.raises(InertiaError, match=f"joint '{joint}': reflected rotor inertia "
                                           r"\(armature\) 1e\+300 kg m\^2 exceeds"):
        apply_drive_parameters(model, {"joints": {joint: {"rotor_inertia": 1e200,
                                                            "gear_ratio": 1e50}}})
    fine = apply_drive_parameters(model, {"joints": {joint: {"armature": 0.5}}})
    assert fine.armature[0] == 0.5
