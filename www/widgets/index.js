// Every widget, by name: the course page, embed.html and <specdec-widget> mount from this list.
import roofline from './roofline.js';
import measured from './measured.js';
import theory from './theory.js';
import exactness from './exactness.js';
import multidraft from './multidraft.js';
import tree from './tree.js';
import train from './train.js';
import boost from './boost.js';
import treepaths from './treepaths.js';
import choose from './choose.js';
import choosehere from './choosehere.js';
import likesworld from './likesworld.js';
import decoding from './decoding.js';
import modelfree from './modelfree.js';
import exercises from './exercises.js';

export const WIDGETS = { roofline, measured, theory, exactness, multidraft, tree, train, boost, treepaths, choose, choosehere, likesworld, decoding, modelfree, exercises };
