#!/usr/bin/env python3
"""Regenerate the Gmsh test meshes of tests/data with the real Gmsh.

    pip install gmsh
    python3 tests/data/make-meshes.py [OUTDIR]

Not run by the build: the .msh files are committed, so the tests need no Gmsh.
The committed files were written by Gmsh 4.15.2 (PyPI wheel `gmsh`), which
writes them identically on every run. Each is MSH 4.1 ASCII, small (< 50 KB),
and made with Gmsh's default options apart from the format and the sizes below:

  square-tri.msh   unit square, triangles (Frontal-Delaunay), mesh size 0.2, with
                   physical groups (so the file has a $PhysicalNames section)
  square-quad.msh  unit square, quads (the triangles recombined, Blossom)
  cube-tet.msh     unit cube, tetrahedra (Delaunay), mesh size 0.3
  cube-hex.msh     unit cube, hexahedra: transfinite 4 x 4 x 4 and recombined
  square-sides-quad.msh  unit square, quads: transfinite 8 x 8 and recombined (the
                   nodes of the structured 8 x 8 mesh), each side its own physical
                   group (tags 1..4: "west", "east", "south", "north", the order of
                   fea_patch_side), group 5 "walls" = south and north, the surface
                   group 10 "domain"
  square-sides-tri.msh   the same groups on triangles (Frontal-Delaunay), mesh size 0.1
  cube-sides-tet.msh     unit cube, tetrahedra, mesh size 0.25, each face its own group
                   (tags 1..6: "west" x = 0, "east", "south" y = 0, "north", "front"
                   z = 0, "back"), the volume group 10 "domain"

tests/api/test-gmsh.c records the node and element counts of these files; after
regenerating them (another Gmsh version may mesh differently), update those
counts from the summary this script prints.
"""
import os
import sys

import gmsh

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))


def start(name):
    gmsh.initialize()
    gmsh.option.setNumber("General.Terminal", 0)
    gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
    gmsh.option.setNumber("Mesh.Binary", 0)
    gmsh.model.add(name)


def finish(name):
    path = os.path.join(out, name + ".msh")
    gmsh.write(path)
    types, tags, _ = gmsh.model.mesh.getElements()
    counts = {gmsh.model.mesh.getElementProperties(t)[0]: len(tg) for t, tg in zip(types, tags)}
    nodes = len(gmsh.model.mesh.getNodes()[0])
    print("%-16s %6d bytes, %d nodes, elements %s" % (name + ".msh", os.path.getsize(path), nodes,
                                                      counts))
    gmsh.finalize()


def square(name, recombine, physical=False):
    start(name)
    surface = gmsh.model.occ.addRectangle(0, 0, 0, 1, 1)
    gmsh.model.occ.synchronize()
    if physical:
        curves = [tag for _, tag in gmsh.model.getEntities(1)]
        gmsh.model.setPhysicalName(1, gmsh.model.addPhysicalGroup(1, curves), "boundary")
        gmsh.model.setPhysicalName(2, gmsh.model.addPhysicalGroup(2, [surface]), "domain")
    gmsh.option.setNumber("Mesh.MeshSizeMax", 0.2)
    if recombine:
        gmsh.option.setNumber("Mesh.RecombineAll", 1)
        gmsh.option.setNumber("Mesh.RecombinationAlgorithm", 1)  # Blossom
    gmsh.model.mesh.generate(2)
    finish(name)


def cube_tet(name):
    start(name)
    gmsh.model.occ.addBox(0, 0, 0, 1, 1, 1)
    gmsh.model.occ.synchronize()
    gmsh.option.setNumber("Mesh.MeshSizeMin", 0.3)  # the default size of a box is finer
    gmsh.option.setNumber("Mesh.MeshSizeMax", 0.3)
    gmsh.model.mesh.generate(3)
    finish(name)


def cube_hex(name, n=4):
    start(name)
    gmsh.model.occ.addBox(0, 0, 0, 1, 1, 1)
    gmsh.model.occ.synchronize()
    for _, curve in gmsh.model.getEntities(1):
        gmsh.model.mesh.setTransfiniteCurve(curve, n + 1)
    for _, surface in gmsh.model.getEntities(2):
        gmsh.model.mesh.setTransfiniteSurface(surface)
        gmsh.model.mesh.setRecombine(2, surface)
    for _, volume in gmsh.model.getEntities(3):
        gmsh.model.mesh.setTransfiniteVolume(volume)
        gmsh.model.mesh.setRecombine(3, volume)
    gmsh.model.mesh.generate(3)
    finish(name)


SIDE_NAMES = ["west", "east", "south", "north", "front", "back"]


def tag_sides(dim):
    """One physical group per side of the unit box, found by its centre: tag
    side + 1, in fea_patch_side's order (direction k low, high)."""
    for side in range(2 * (dim + 1)):
        k, high = side // 2, side % 2
        ents = [tag for _, tag in gmsh.model.getEntities(dim)
                if abs(gmsh.model.occ.getCenterOfMass(dim, tag)[k] - high) < 1e-9]
        gmsh.model.addPhysicalGroup(dim, ents, side + 1)
        gmsh.model.setPhysicalName(dim, side + 1, SIDE_NAMES[side])
    return


def square_sides(name, quads):
    start(name)
    surface = gmsh.model.occ.addRectangle(0, 0, 0, 1, 1)
    gmsh.model.occ.synchronize()
    tag_sides(1)
    walls = [tag for _, tag in gmsh.model.getEntities(1)
             if abs(gmsh.model.occ.getCenterOfMass(1, tag)[1] - 0.5) > 0.25]
    gmsh.model.setPhysicalName(1, gmsh.model.addPhysicalGroup(1, walls, 5), "walls")
    gmsh.model.setPhysicalName(2, gmsh.model.addPhysicalGroup(2, [surface], 10), "domain")
    if quads:
        for _, curve in gmsh.model.getEntities(1):
            gmsh.model.mesh.setTransfiniteCurve(curve, 9)
        gmsh.model.mesh.setTransfiniteSurface(surface)
        gmsh.model.mesh.setRecombine(2, surface)
    else:
        gmsh.option.setNumber("Mesh.MeshSizeMax", 0.1)
    gmsh.model.mesh.generate(2)
    finish(name)


def cube_sides(name):
    start(name)
    volume = gmsh.model.occ.addBox(0, 0, 0, 1, 1, 1)
    gmsh.model.occ.synchronize()
    tag_sides(2)
    gmsh.model.setPhysicalName(3, gmsh.model.addPhysicalGroup(3, [volume], 10), "domain")
    gmsh.option.setNumber("Mesh.MeshSizeMin", 0.25)
    gmsh.option.setNumber("Mesh.MeshSizeMax", 0.25)
    gmsh.model.mesh.generate(3)
    finish(name)


square("square-tri", recombine=False, physical=True)
square("square-quad", recombine=True)
cube_tet("cube-tet")
cube_hex("cube-hex")
square_sides("square-sides-quad", quads=True)
square_sides("square-sides-tri", quads=False)
cube_sides("cube-sides-tet")
